//! What app code sees: a [`Context`] per call, and the replies it hands back.

use crate::principal::{CallId, ConnectionId, Principal};
use crate::update::{Scoped, Update};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::rfc014::{InstanceName, ToolsetName};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The app work a [`crate::Effect::Call`] asks for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallKind {
    /// Run tool `tool` with `args` (already checked against its schema); reply with
    /// [`Reply::Tool`].
    Tool {
        /// The tool's name.
        tool: String,
        /// The arguments, an object valid against the tool's current definition.
        args: Map<String, Value>,
    },
    /// Open the context's toolset or instance (start a game, say); reply with
    /// [`Reply::Open`]. The options are in [`Context::options`], already validated.
    Open,
    /// Close the context's toolset or instance (a forfeit, say); reply with [`Reply::Close`].
    /// `disconnect` is true when the connection of a per-connection principal went away.
    Close {
        /// The connection closed, and toolsets end at disconnect (§5.6).
        disconnect: bool,
    },
}

/// A request for app code: run it, then hand the outcome to
/// [`Session::handle_call_done`](crate::Session::handle_call_done).
#[derive(Debug)]
pub struct Call {
    /// Which call this is.
    pub id: CallId,
    /// What to do.
    pub kind: CallKind,
    /// Who and where; record state changes through it, then return it in the [`Outcome`].
    pub context: Context,
}

/// What app code answers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// A tool's result. Use `isError` for tool failures; the SDK adds the hints.
    Tool(CallToolResult),
    /// An open's outcome.
    Open(OpenReply),
    /// A close's outcome.
    Close(CloseReply),
}

/// The outcome of an open.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenReply {
    /// The title of what was opened (default: the toolset's title, with the instance name).
    pub title: Option<String>,
    /// What was opened, for the agent (the board, say).
    pub content: Vec<ContentBlock>,
    /// `Some(why)`: refuse the open by policy; nothing opens and the host gets `-32602`.
    pub refusal: Option<String>,
}

impl OpenReply {
    /// An open that succeeded, showing `text`.
    pub fn text(text: impl Into<String>) -> Self {
        OpenReply {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// An open refused by policy.
    pub fn refuse(why: impl Into<String>) -> Self {
        OpenReply {
            refusal: Some(why.into()),
            ..Self::default()
        }
    }
}

/// The outcome of a close.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CloseReply {
    /// Consequences, for the agent ("You resigned; White wins.").
    pub content: Vec<ContentBlock>,
    /// Why it ended, for the `ended` record other hosts of the principal read.
    pub reason: Option<String>,
}

impl CloseReply {
    /// A close showing `text`, which is also the ended record's reason.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        CloseReply {
            content: vec![ContentBlock::text(text.clone())],
            reason: Some(text),
        }
    }
}

/// App work done: the context (with the changes recorded through it) and the reply.
#[derive(Debug)]
pub struct Outcome {
    /// The context from the [`Call`].
    pub context: Context,
    /// The reply.
    pub reply: Reply,
}

type Hook = Box<dyn FnOnce() + Send + 'static>;

/// Work app code asked to run once its call is finished ([`Context::after_commit`]), handed
/// to the driver in [`crate::Effect::Committed`]. Run it with [`AfterCommit::run`].
#[derive(Default)]
pub struct AfterCommit {
    // A mutex only so that `Context` stays `Sync` for app code holding `&Context` across an
    // await; the hooks themselves need only be `Send`.
    hooks: Mutex<Vec<Hook>>,
}

impl AfterCommit {
    /// How many hooks there are.
    pub fn len(&self) -> usize {
        self.hooks.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs every hook, in the order they were registered.
    pub fn run(self) {
        let hooks = self.hooks.into_inner().unwrap_or_else(|p| p.into_inner());
        for hook in hooks {
            hook();
        }
    }

    fn push(&self, hook: Hook) {
        self.hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(hook);
    }
}

impl std::fmt::Debug for AfterCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AfterCommit({} hooks)", self.len())
    }
}

/// Who a call is for and where it runs, and the recorder of the state changes it makes.
///
/// Changes recorded here are committed when the outcome reaches the session: the caller's
/// own changes ride in the call's result, the same changes reach the principal's other
/// connections, and changes for other principals reach theirs as pushes (§6.2).
#[derive(Debug)]
pub struct Context {
    pub(crate) principal: Principal,
    pub(crate) connection: ConnectionId,
    pub(crate) toolset: Option<ToolsetName>,
    pub(crate) instance: Option<InstanceName>,
    pub(crate) options: Value,
    pub(crate) own: Update,
    pub(crate) others: Vec<(Principal, Update)>,
    pub(crate) after_commit: AfterCommit,
    pub(crate) cancelled: Arc<AtomicBool>,
}

impl Context {
    /// A context for app code outside any connection's request (tests, background work).
    pub fn new(principal: Principal, connection: ConnectionId) -> Self {
        Context {
            principal,
            connection,
            toolset: None,
            instance: None,
            options: Value::Null,
            own: Update::new(),
            others: Vec::new(),
            after_commit: AfterCommit::default(),
            cancelled: Arc::default(),
        }
    }

    /// The same principal, connection and scope, with nothing recorded.
    pub(crate) fn blank(&self) -> Context {
        Context {
            principal: self.principal.clone(),
            connection: self.connection,
            toolset: self.toolset.clone(),
            instance: self.instance.clone(),
            options: self.options.clone(),
            own: Update::new(),
            others: Vec::new(),
            after_commit: AfterCommit::default(),
            cancelled: self.cancelled.clone(),
        }
    }

    /// The same context with everything recorded but the hooks (for a step that runs
    /// again: the hooks run once, from the first run).
    pub(crate) fn duplicate(&self) -> Context {
        Context {
            own: self.own.clone(),
            others: self.others.clone(),
            ..self.blank()
        }
    }

    /// The principal the call acts for.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The connection the call came in on.
    pub fn connection(&self) -> ConnectionId {
        self.connection
    }

    /// The toolset the call runs in, if any.
    pub fn toolset(&self) -> Option<&ToolsetName> {
        self.toolset.as_ref()
    }

    /// The instance the call runs in, if any.
    pub fn instance(&self) -> Option<&InstanceName> {
        self.instance.as_ref()
    }

    /// The options in force for the toolset or instance (`null` outside one).
    pub fn options(&self) -> &Value {
        &self.options
    }

    /// Tool changes in the call's own scope: its instance, its toolset, or (for tools outside
    /// toolsets) the free tools.
    pub fn here(&mut self) -> Scoped<'_> {
        match (&self.toolset, &self.instance) {
            (Some(t), Some(i)) => self.own.instance(t.as_str(), i.as_str()),
            (Some(t), None) => self.own.toolset(t.as_str()),
            _ => self.own.tools(),
        }
    }

    /// Makes `tool` visible in the call's scope.
    pub fn show(&mut self, tool: impl Into<String>) -> &mut Self {
        self.here().show(tool);
        self
    }

    /// Makes `tool` invisible in the call's scope.
    pub fn hide(&mut self, tool: impl Into<String>) -> &mut Self {
        self.here().hide(tool);
        self
    }

    /// Any change to the caller's own principal, in any scope.
    pub fn update(&mut self) -> &mut Update {
        &mut self.own
    }

    /// Changes to another principal (the opponent in a shared game, say); they reach that
    /// principal's connections as pushes or `tools/hints`.
    pub fn update_for(&mut self, principal: &Principal) -> &mut Update {
        if *principal == self.principal {
            return &mut self.own;
        }
        let at = match self.others.iter().position(|(p, _)| p == principal) {
            Some(at) => at,
            None => {
                self.others.push((principal.clone(), Update::new()));
                self.others.len() - 1
            }
        };
        &mut self.others[at].1
    }

    /// Runs `hook` once this call is finished: after its answer was queued (the result with
    /// its hints, an open's or close's result, or, for a call the host cancelled, the
    /// `tools/hints` that carry its changes, §6.1) and its changes were published to the
    /// principal's other connections and to other principals.
    ///
    /// This is the signal for work that must come *after* the call in rev order, such as a
    /// bot's reply to a move: an update applied from the hook is "something else's"
    /// consequence (§6.2) and takes the next rev on a push. The driver runs hooks on the
    /// connection's task, in registration order, so keep them short (send on a channel,
    /// spawn a task). Hooks of a call whose outcome never reaches the session (the app
    /// panicked, or the session was dropped) never run.
    pub fn after_commit(&mut self, hook: impl FnOnce() + Send + 'static) -> &mut Self {
        self.after_commit.push(Box::new(hook));
        self
    }

    /// Whether the host cancelled this call (MCP `notifications/cancelled`). No result will
    /// be written, but the changes recorded here still reach the host as `tools/hints`
    /// (§6.1), so app code may stop early at any point where its recorded changes match
    /// what it really did.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::update::{Op, Scope};

    #[test]
    fn a_context_with_hooks_stays_send_and_sync() {
        fn send_sync<T: Send + Sync>(_: &T) {}
        let mut ctx = Context::new(Principal::authenticated("ada"), ConnectionId(1));
        // Not `Sync` itself: the mutex makes the context `Sync` anyway.
        let cell = std::cell::Cell::new(1);
        ctx.after_commit(move || cell.set(2));
        send_sync(&ctx);
        assert_eq!(ctx.after_commit.len(), 1);
    }

    #[test]
    fn hooks_run_once_in_registration_order() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut ctx = Context::new(Principal::authenticated("ada"), ConnectionId(1));
        for n in 1..=3 {
            let order = order.clone();
            ctx.after_commit(move || order.lock().expect("not poisoned").push(n));
        }
        std::mem::take(&mut ctx.after_commit).run();
        assert_eq!(*order.lock().expect("not poisoned"), [1, 2, 3]);
        assert!(ctx.after_commit.is_empty(), "taken hooks do not run twice");
    }

    #[test]
    fn after_commit_counts_its_hooks() {
        let mut ctx = Context::new(Principal::authenticated("ada"), ConnectionId(1));
        assert!(ctx.after_commit.is_empty());
        ctx.after_commit(|| {});
        assert!(!ctx.after_commit.is_empty(), "one hook registered");
        assert_eq!(ctx.after_commit.len(), 1);
    }

    /// A context running in `toolset` (and `instance`), as the session builds it.
    fn context_in(toolset: &str, instance: Option<&str>) -> Context {
        let mut ctx = Context::new(Principal::authenticated("ada"), ConnectionId(1));
        ctx.toolset = Some(ToolsetName::parse(toolset).expect("a valid toolset name"));
        ctx.instance = instance.map(|i| InstanceName::parse(i).expect("a valid instance name"));
        ctx
    }

    /// The scope of each visibility change `update` records.
    fn visibility_scopes(update: &Update) -> Vec<Scope> {
        update
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Visible(scope, _, _) => Some(scope.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn here_is_the_calls_own_toolset_instance_or_the_free_tools() {
        let mut free = Context::new(Principal::authenticated("ada"), ConnectionId(1));
        free.show("hint");
        assert_eq!(visibility_scopes(&free.own), [Scope::Free]);

        let mut notes = context_in("notes", None);
        notes.hide("note");
        assert_eq!(
            visibility_scopes(&notes.own),
            [Scope::Toolset("notes".into())],
            "a toolset without instances changes its own tools"
        );

        let mut game = context_in("game", Some("g1"));
        game.show("play");
        assert_eq!(
            visibility_scopes(&game.own),
            [Scope::Instance("game".into(), "g1".into())]
        );
    }

    #[test]
    fn update_for_keeps_one_update_per_principal() {
        let ada = Principal::authenticated("ada");
        let bob = Principal::authenticated("bob");
        let carol = Principal::authenticated("carol");
        let mut ctx = Context::new(ada.clone(), ConnectionId(1));
        ctx.update_for(&ada).tools().show("hint");
        assert_eq!(ctx.own.ops.len(), 1, "ada's change is the caller's own");
        assert!(ctx.others.is_empty());

        ctx.update_for(&bob).tools().show("hint");
        ctx.update_for(&carol).tools().show("hint");
        ctx.update_for(&bob).tools().hide("fortune");
        assert_eq!(ctx.own.ops.len(), 1, "others' changes are not ada's");
        let others: Vec<(&str, usize)> = ctx
            .others
            .iter()
            .map(|(p, u)| (p.id(), u.ops.len()))
            .collect();
        assert_eq!(others, [("bob", 2), ("carol", 1)]);
    }
}
