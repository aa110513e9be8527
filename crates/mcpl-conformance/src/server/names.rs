//! Instance names (§5.1, §5.2): every shape the grammar allows must be used exactly as
//! proposed (v18), and a generated set of names that break it must be refused (v34).

use super::ctx::{Ctx, list_tools, require_tools, toolsets_list};
use super::toolsets::close;
use crate::fixture::{ECHO, INSTANCED};
use crate::server::conn::Profile;
use crate::verdict::{Step, ensure, fail};
use crate::wire::{brief, lists_open, open_entries};
use mcpl_protocol::methods;
use serde_json::{Value, json};

/// Characters a name may hold after its first: both cases, digits, `-` and `_`.
const TAIL: &[u8] = b"bC9-d_E8f-G_h7I-j_K6l-M_n5O-p_Q4";

/// Grammatical names of every shape: 1, 2, 15, 16, 17, 31 and 32 characters, starting with
/// an upper-case letter, a lower-case letter or a digit, mixing case, digits, `-` and `_`.
/// `tag` (alphanumeric) keeps them apart from other runs' names.
pub(crate) fn good_names(tag: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (len, first) in [
        (1, 'Q'),
        (1, '7'),
        (2, 'z'),
        (15, 'A'),
        (16, 'b'),
        (17, '3'),
        (31, 'Z'),
        (32, 'm'),
    ] {
        let mut name = String::from(first);
        let tag: String = tag.chars().filter(char::is_ascii_alphanumeric).collect();
        let mut tail = tag
            .into_bytes()
            .into_iter()
            .chain(TAIL.iter().copied().cycle());
        while name.len() < len {
            name.push(char::from(tail.next().unwrap_or(b'x')));
        }
        names.push(name);
    }
    names
}

/// Names that break the grammar, each in a different way: empty, too long, a first character
/// that is not alphanumeric, and characters outside `[A-Za-z0-9_-]` anywhere.
pub(crate) fn bad_names() -> Vec<String> {
    let mut names: Vec<String> = ["", "-lead", "_lead", " lead", "trail ", "a b", "a.b", "a/b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for c in [
        ':', '@', '+', '*', '#', '\t', '\n', 'ü', 'é', '名', '🙂', '\u{0}', '\u{7f}',
    ] {
        names.push(format!("ab{c}cd"));
    }
    names.push("x".repeat(33));
    names.push(format!("A{}", "b-_9".repeat(10)));
    names.push(".".into());
    names
}

pub(super) async fn v18(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let tag = format!("{}", cx.nonce);
    for proposed in good_names(&tag) {
        let r = conn
            .request(
                methods::TOOLSETS_OPEN,
                json!({"toolset": INSTANCED, "instance": proposed}),
            )
            .await?;
        let got = r.get("instance").and_then(Value::as_str).unwrap_or("");
        ensure!(
            got == proposed,
            "the server answered `{got}` for the proposed instance name `{proposed}` (§5.2: use it exactly as given, or refuse the open)"
        );
        let list = toolsets_list(&mut conn).await?;
        ensure!(
            lists_open(&list, INSTANCED, Some(&proposed)),
            "toolsets/list does not list `{proposed}` open under exactly that name: {}",
            brief(&list)
        );
        close(&mut conn, &proposed).await?;
    }
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

pub(super) async fn v34(cx: &mut Ctx<'_>) -> Step {
    let (mut conn, _) = cx.connected(Profile::hinted()).await?;
    let before = toolsets_list(&mut conn).await?;
    let count = open_entries(&before).len();
    for bad in bad_names() {
        let r = conn
            .request_raw(
                methods::TOOLSETS_OPEN,
                json!({"toolset": INSTANCED, "instance": bad}),
            )
            .await?;
        ensure!(
            r.is_err(),
            "the instance name {bad:?} breaks the grammar and must be refused with a JSON-RPC error (§5.1); the server answered {}",
            brief(&r.unwrap_or_default())
        );
    }
    let after = toolsets_list(&mut conn).await?;
    ensure!(
        open_entries(&after).len() == count,
        "a refused open must open nothing: `open` went from {count} to {} entries: {}",
        open_entries(&after).len(),
        brief(&after)
    );
    require_tools(&list_tools(&mut conn).await?, &[ECHO])?;
    conn.check_revs()?;
    conn.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::rfc014::check_name;

    #[test]
    fn v18_generated_names_are_grammatical_and_cover_every_shape() {
        let names = good_names("12345");
        for n in &names {
            assert!(check_name("instance", n).is_ok(), "{n}");
        }
        let lens: Vec<usize> = names.iter().map(String::len).collect();
        assert!(lens.contains(&1) && lens.contains(&32) && lens.contains(&17));
        let all: String = names.concat();
        assert!(all.chars().any(|c| c.is_ascii_uppercase()));
        assert!(all.chars().any(|c| c.is_ascii_lowercase()));
        assert!(all.contains('-') && all.contains('_'));
        assert!(
            names
                .iter()
                .any(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        );
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn v34_generated_names_all_break_the_grammar() {
        let names = bad_names();
        assert!(names.len() >= 20);
        for n in &names {
            assert!(check_name("instance", n).is_err(), "{n:?} is grammatical");
        }
    }
}
