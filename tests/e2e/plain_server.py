"""A plain MCP server written with the official Python SDK's high-level server (FastMCP),
for the surface's host-side toolsets (crates/mcpl-cli/tests/e2e.rs): 60 tools in three
families (`git_*`, `fs_*`, `web_*`, 20 each) and no MCPL. `git_hook_add` (one of the git
family) adds a tool at run time and announces `tools/list_changed`.

Usage: plain_server.py   (serves MCP on stdio)
"""

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("plainbox")

FAMILIES = {
    "git": [
        ("status", "Show the working tree status of the repository."),
        ("commit", "Record staged changes in the repository with a message."),
        ("log", "List recent commits with their authors and messages."),
        ("diff", "Show line changes between the working tree and the index."),
        ("branch", "List, create or delete branches."),
        ("checkout", "Switch the working tree to another branch."),
        ("merge", "Join another branch's history into the current one."),
        ("rebase", "Replay commits on top of another base commit."),
        ("tag", "Create or list tags that name commits."),
        ("fetch", "Download objects and refs from a remote repository."),
        ("pull", "Fetch from a remote and integrate the changes."),
        ("push", "Upload local commits to a remote repository."),
        ("stash", "Set aside uncommitted changes for later."),
        ("blame", "Show which commit last changed each line of a file."),
        ("show", "Show one commit with its patch."),
        ("reset", "Move the current branch head to another commit."),
        ("revert", "Make a commit that undoes an earlier one."),
        ("clean", "Remove untracked files from the working tree."),
        ("remote", "List or configure the remote repositories."),
    ],
    "fs": [
        ("read", "Read a file and return its text."),
        ("write", "Write text to a file, replacing what it held."),
        ("append", "Add text at the end of a file."),
        ("delete", "Remove a file."),
        ("move", "Rename or move a file to another path."),
        ("copy", "Copy a file to another path."),
        ("list", "List the entries of a directory."),
        ("mkdir", "Create a directory and its parents."),
        ("rmdir", "Remove an empty directory."),
        ("stat", "Show a file's size, owner and times."),
        ("chmod", "Change a file's permission bits."),
        ("find", "Find files whose names match a pattern."),
        ("grep", "Search files for lines matching a regular expression."),
        ("head", "Show the first lines of a file."),
        ("tail", "Show the last lines of a file."),
        ("touch", "Create an empty file or update its time."),
        ("link", "Create a symbolic link to a path."),
        ("du", "Report how much disk space a directory uses."),
        ("watch", "Report changes to a directory as they happen."),
        ("hash", "Compute the SHA-256 checksum of a file."),
    ],
    "web": [
        ("fetch", "Download the contents of a web page and return its text."),
        ("search", "Search the web and return the top results."),
        ("screenshot", "Capture an image of a rendered page."),
        ("links", "Extract every hyperlink from a page."),
        ("headers", "Show the HTTP response headers of a URL."),
        ("status", "Check whether a site answers and how fast."),
        ("dns", "Resolve a domain name to its addresses."),
        ("whois", "Look up who registered a domain."),
        ("post", "Send form data to a URL with an HTTP POST."),
        ("cookies", "List the cookies a site sets."),
        ("robots", "Read a site's robots.txt rules."),
        ("sitemap", "List the pages a site's sitemap names."),
        ("rss", "Read the latest entries of a news feed."),
        ("translate", "Translate a page into another language."),
        ("summarize", "Summarize the main points of an article."),
        ("archive", "Find archived copies of a page."),
        ("certificate", "Show the TLS certificate a site presents."),
        ("ping", "Measure the round-trip time to a host."),
        ("download", "Save a remote file to disk."),
        ("validate", "Check a page's HTML for errors."),
    ],
}


def make_tool(name, description):
    def tool(target: str = "") -> str:
        return f"{name} done for {target or 'nothing'}"

    server.add_tool(tool, name=name, description=description)


for family, verbs in FAMILIES.items():
    for verb, description in verbs:
        make_tool(f"{family}_{verb}", description)


@server.tool(name="git_hook_add", description="Install a repository hook as a new tool.")
async def git_hook_add(hook: str, ctx: Context) -> str:
    make_tool(f"git_hook_{hook}", f"Run the {hook} repository hook.")
    await ctx.session.send_tool_list_changed()
    return f"hook {hook} installed"


if __name__ == "__main__":
    server.run()
