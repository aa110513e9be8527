//! A child process spoken to over its stdin and stdout (MCP stdio, host side).

use super::stderr::LineSplitter;
pub use super::stderr::{STDERR_BACKLOG, STDERR_LINE_MAX, StderrLines, StderrMode};
use super::{Transport, TransportKind, lines};
use crate::error::RpcError;
use mcpl_protocol::frame::Limits;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

/// Reads `err` chunk by chunk, as lines of at most [`STDERR_LINE_MAX`] bytes, into `tx` until
/// it ends. A line that finds the backlog full is dropped and counted in `dropped`; each run of
/// drops is told by one warning, when the next line fits or the stream ends. Once the reader is
/// gone, the stream is read and discarded.
async fn pump_stderr<R: AsyncBufRead + Unpin>(
    mut err: R,
    tx: mpsc::Sender<String>,
    dropped: Arc<AtomicU64>,
) {
    let mut splitter = LineSplitter::new(STDERR_LINE_MAX);
    // Lines dropped since the last warning.
    let mut run: u64 = 0;
    let mut open = true;
    let mut send = |line: String| {
        if !open {
            return;
        }
        match tx.try_send(line) {
            Ok(()) => warn_dropped(&mut run),
            Err(mpsc::error::TrySendError::Full(_)) => {
                run += 1;
                dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(mpsc::error::TrySendError::Closed(_)) => open = false,
        }
    };
    loop {
        let chunk = match err.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let read = chunk.len();
        splitter.push(chunk).into_iter().for_each(&mut send);
        err.consume(read);
    }
    splitter.finish().into_iter().for_each(send);
    warn_dropped(&mut run);
}

/// Warns once for a run of dropped stderr lines, and starts a new run.
fn warn_dropped(run: &mut u64) {
    if *run > 0 {
        tracing::warn!(
            dropped = *run,
            "dropped {run} lines of a child's stderr: {STDERR_BACKLOG} lines were waiting to be read"
        );
        *run = 0;
    }
}

impl Transport {
    /// Spawns `command` and speaks newline-delimited JSON over its stdin and stdout. The
    /// child is killed when the transport is dropped; [`crate::Peer::close`] first closes its
    /// stdin and gives it a moment to exit.
    pub fn child(
        mut command: Command,
        stderr: StderrMode,
        limits: Limits,
    ) -> Result<Transport, RpcError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Capture => Stdio::piped(),
                StderrMode::Discard => Stdio::null(),
            })
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| RpcError::Transport(format!("cannot spawn {command:?}: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(RpcError::Transport("child has no stdin or stdout".into()));
        };
        let mut transport =
            lines::line_transport(TransportKind::ChildProcess, stdout, stdin, limits);
        if let Some(err) = child.stderr.take() {
            let (tx, rx) = mpsc::channel(STDERR_BACKLOG);
            let dropped = Arc::new(AtomicU64::new(0));
            let pump = pump_stderr(BufReader::new(err), tx, dropped.clone());
            transport.guard.tasks.push(tokio::spawn(pump));
            transport.stderr = Some(StderrLines { rx, dropped });
        }
        transport.guard.child = Some(child);
        Ok(transport)
    }

    /// Spawns a shell command line (`sh -c LINE`; `cmd /C LINE` on Windows), as the CLI's
    /// `--server` takes it.
    pub fn child_shell(line: &str, stderr: StderrMode) -> Result<Transport, RpcError> {
        let command = if cfg!(windows) {
            let mut c = Command::new("cmd");
            c.arg("/C").arg(line);
            c
        } else {
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        };
        Transport::child(command, stderr, Limits::default())
    }

    /// The process id of the child, while it runs (`None` for other transports).
    pub fn child_id(&self) -> Option<u32> {
        self.guard.child.as_ref().and_then(|c| c.id())
    }

    /// The captured stderr of a child process started with [`StderrMode::Capture`]; once.
    pub fn take_stderr(&mut self) -> Option<StderrLines> {
        self.stderr.take()
    }
}
