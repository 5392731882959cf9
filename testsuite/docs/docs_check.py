#!/usr/bin/env python3
"""docs_check.py - the documents match the tools.

  * every ```cage block in README.md and docs/*.md compiles (for Linux and
    for macOS; params without a default get a value of their type) and is
    `cagec fmt`-clean; a ```cage-error block is a deliberate error example
    and must fail to compile; a block without a language that looks like a
    policy is an error (it would escape the check);
  * README.md starts with its title, then the block with the two commands;
  * every `cagec VERB` and `cagerun VERB` the documents and man pages show
    is a command the program's own --help lists, and every --option shown
    after `cagec [VERB]` or `cagerun` is one that --help of that command
    lists; the verbs and options are read from --help, never listed here;
  * docs/cagec.md's synopsis (its first block) has a line for every verb.

usage: docs_check.py CAGEC CAGERUN SRCDIR
       docs_check.py --self-test CAGEC CAGERUN SRCDIR
(--self-test runs the checks on made-up documents with one mistake of each
kind and fails unless every one is reported.)
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_-]*)\s*$")
# A line a policy can start with (after comments and blank lines).
POLICY_START = re.compile(
    r"^(cage\s+\d|import\s+\"|param\s+\w|list\s+\w+\s*=|profile\s+\w|"
    r"(allow|deny|protect)\s+\w|mode\s+(enforce|enforce-fs|monitor|off)\b|"
    r"env\s+(keep|set|unset)\b|private\s+(tmp|home))")
PARAM = re.compile(r"^\s*param\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*([a-z]+)\s*(=)?", re.M)
PARAM_VALUES = {"host": "example.com", "string": "x", "port": "8080"}


def blocks(path):
    """(first line number, language, lines) of every fenced block."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines[i + 1:j]]
        out.append((i + 1, lang, body))
        i = j + 1
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)


class Checker:
    def __init__(self, cagec, cagerun, tmp):
        self.cagec, self.cagerun, self.tmp = cagec, cagerun, tmp
        self.errors = []
        self.checked = {"cage": 0, "cage-error": 0, "commands": 0}
        self.helps = {}

    def err(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    # ---- policies ----
    def policy_file(self, body, n):
        path = os.path.join(self.tmp, f"block{n}.cage")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(body).rstrip("\n") + "\n")
        return path

    def defines(self, text):
        ds = []
        for name, typ, has_default in PARAM.findall(text):
            if not has_default:
                ds += ["-D", f"{name}={PARAM_VALUES.get(typ, self.tmp)}"]
        return ds

    def check_policy(self, where, body, n):
        path = self.policy_file(body, n)
        ds = self.defines("\n".join(body))
        for target in ("linux", "macos"):
            r = run([self.cagec, path, "--target", target, "--emit", "ir", "--color=never"] + ds)
            if r.returncode != 0:
                self.err(where, f"```cage block does not compile for {target} "
                         f"(status {r.returncode}); mark a deliberate error example "
                         f"```cage-error:\n{r.stderr.strip()}")
                return
        r = run([self.cagec, "fmt", "--check", "--color=never", path])
        if r.returncode != 0:
            self.err(where, f"```cage block is not `cagec fmt`-clean:\n{r.stdout.strip()}")
        self.checked["cage"] += 1

    def check_error_example(self, where, body, n):
        path = self.policy_file(body, n)
        r = run([self.cagec, path, "--target", "linux", "--emit", "ir", "--color=never"]
                + self.defines("\n".join(body)))
        if r.returncode != 1:
            self.err(where, f"```cage-error block compiles (status {r.returncode}): "
                     "it is not an error example, make it ```cage")
        self.checked["cage-error"] += 1

    def check_blocks(self, path, rel):
        for n, (line, lang, body) in enumerate(blocks(path)):
            where = f"{rel}:{line}"
            if lang == "cage":
                self.check_policy(where, body, f"{abs(hash(rel))}-{n}")
            elif lang == "cage-error":
                self.check_error_example(where, body, f"{abs(hash(rel))}-{n}")
            elif lang == "":
                first = next((ln.strip() for ln in body
                              if ln.strip() and not ln.strip().startswith("#")), "")
                if POLICY_START.match(first):
                    self.err(where, "a block without a language holds a policy: "
                             "fence it ```cage (or ```cage-error) so it is checked")

    # ---- commands ----
    def help_text(self, prog, verb):
        key = (prog, verb)
        if key not in self.helps:
            exe = self.cagec if prog == "cagec" else self.cagerun
            r = run([exe] + ([verb] if verb else []) + ["--help"])
            self.helps[key] = r.stdout + r.stderr if r.returncode == 0 else ""
        return self.helps[key]

    def verbs(self, prog):
        """Verbs a program's --help shows as `PROG verb`."""
        words = re.findall(r"\b%s ([a-z][a-z0-9-]*)\b(?![.\w/])" % prog, self.help_text(prog, None))
        return set(words)

    def options(self, prog, verb):
        text = self.help_text(prog, verb)
        if verb:  # a verb's help may say "as for cagec": those count too
            text += self.help_text(prog, None)
        return set(re.findall(r"(--[a-z][a-z0-9-]*)", text))

    def check_command(self, where, snippet):
        """snippet starts with cagec or cagerun."""
        m = re.match(r"(cagec|cagerun)\b(.*)", snippet)
        prog, rest = m.group(1), m.group(2)
        # the program's own words end at a shell operator or `--` (COMMAND)
        rest = re.split(r"\s--(?=\s|$)|\||;|&&|>|<|\)|\s#|`", rest)[0]
        words = rest.split()
        verb = None
        if words and re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):
            if words[0] in self.verbs(prog):
                verb = words[0]
            else:
                self.err(where, f"`{prog} {words[0]}` is not a command: "
                         f"`{prog} --help` lists {sorted(self.verbs(prog)) or 'none'}")
                return
        known = self.options(prog, verb)
        for w in words:
            if w.startswith("--") and len(w) > 2:
                opt = re.match(r"--[a-z][a-z0-9-]*", w)
                if opt and opt.group(0) not in known:
                    self.err(where, f"`{opt.group(0)}` is not an option of "
                             f"`{prog}{' ' + verb if verb else ''}` (not in its --help)")
        self.checked["commands"] += 1

    @staticmethod
    def program_snippets(code):
        """The parts of one piece of code that run cagec or cagerun."""
        return [m.group(1) for m in
                re.finditer(r"(?:^|[\s(=$])((?:cagec|cagerun)\b[^\n]*)", code)]

    def code_pieces(self, path):
        """(line, code) of what a document shows as code: the lines of
        fenced blocks (continuation lines joined) and inline code spans;
        for a man page, example blocks (.EX) and bold lines (.B)."""
        text = open(path, encoding="utf-8").read()
        pieces = []
        if path.endswith((".1", ".5", ".8")):
            text = re.sub(r"\\f[BIRP]|\\f\[[A-Z]*\]|\\&|\\c", "", text)
            text = text.replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
            in_ex = False
            for n, line in enumerate(text.split("\n"), 1):
                if line.startswith(".EX"):
                    in_ex = True
                elif line.startswith(".EE"):
                    in_ex = False
                elif in_ex:
                    pieces.append((n, line))
                elif re.match(r"^\.B\s", line):
                    pieces.append((n, line[3:].strip().strip('"')))
            return pieces
        in_block = False
        lines = text.split("\n")
        n = 0
        while n < len(lines):
            line = lines[n]
            if FENCE.match(line) or re.match(r"^\s*```\s*$", line):
                in_block = not in_block
            elif in_block:
                first = n
                while line.endswith("\\") and n + 1 < len(lines):
                    n += 1
                    line = line[:-1] + " " + lines[n].strip()
                pieces.append((first + 1, line))
            else:
                for span in re.findall(r"`([^`\n]+)`", line):
                    pieces.append((n + 1, span))
            n += 1
        return pieces

    def check_commands(self, path, rel):
        for n, code in self.code_pieces(path):
            for snip in self.program_snippets(code):
                self.check_command(f"{rel}:{n}", snip)

    # ---- README and synopsis ----
    def check_readme(self, path, rel):
        lines = open(path, encoding="utf-8").read().split("\n")
        if not lines or lines[0] != "# cage":
            self.err(f"{rel}:1", "README.md must start with its title `# cage`")
        nonblank = [(i, ln) for i, ln in enumerate(lines[1:], 2) if ln.strip()]
        if not nonblank or nonblank[0][1].strip() != "```sh":
            self.err(f"{rel}:2", "the title must be followed by the ```sh block of the two commands")
            return
        start = nonblank[0][0]
        body = []
        for ln in lines[start:]:
            if ln.startswith("```"):
                break
            body.append(ln)
        cmds = [b for b in body if b.strip()]
        if len(cmds) != 2 or not cmds[0].startswith(".ci/deps && cmake -S . -B build") \
                or cmds[1].strip() != ".ci/test":
            self.err(f"{rel}:{start}", "the first block must hold exactly the two commands: "
                     "`.ci/deps && cmake ... build/cagerun ...` and `.ci/test`")

    def check_synopsis(self, path, rel):
        bl = blocks(path)
        if not bl:
            self.err(rel, "no synopsis block")
            return
        line, _, body = bl[0]
        syn = "\n".join(body)
        for v in sorted(self.verbs("cagec")):
            if not re.search(r"^cagec %s\b" % re.escape(v), syn, re.M):
                self.err(f"{rel}:{line}", f"the synopsis has no line for `cagec {v}`")


def check_tree(c, src):
    docs = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    man = sorted(glob.glob(os.path.join(src, "docs", "man", "*.[1-8]")))
    for p in docs:
        rel = os.path.relpath(p, src)
        c.check_blocks(p, rel)
        c.check_commands(p, rel)
    for p in man:
        c.check_commands(p, os.path.relpath(p, src))
    c.check_readme(os.path.join(src, "README.md"), "README.md")
    c.check_synopsis(os.path.join(src, "docs", "cagec.md"), "docs/cagec.md")


def self_test(cagec, cagerun):
    """Made-up documents, one mistake of each kind: each must be found."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.makedirs(os.path.join(src, "docs", "man"))
        open(os.path.join(src, "README.md"), "w").write(
            "# nope\n\n```\ncage 1\nallow read \"/usr/**\"\n```\n")
        open(os.path.join(src, "docs", "cagec.md"), "w").write(
            "```\ncagec FILE\n```\n\nRun `cagec frobnicate x.cage` or `cagec lint --bogus x`.\n\n"
            "```sh\ncagerun --no-such-flag -p p.cage -- curl --max-time 5 x\n```\n\n"
            "```cage\ncage 1\nallow read \"relative\"\n```\n\n"
            "```cage\ncage 1\nallow  read \"/usr/**\"\n```\n\n"
            "```cage-error\ncage 1\nallow read \"/usr/**\"\n```\n")
        open(os.path.join(src, "docs", "man", "x.1"), "w").write(
            ".B cagec \\-\\-no\\-such\\-option\n")
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        c = Checker(cagec, cagerun, work)
        check_tree(c, src)
        want = ["README.md must start with its title",
                "the title must be followed by the ```sh block",
                "`cagec frobnicate` is not a command",
                "`--bogus` is not an option of `cagec lint`",
                "`--no-such-flag` is not an option of `cagerun`",
                "`--no-such-option` is not an option of `cagec`",
                "does not compile for linux",
                "is not `cagec fmt`-clean",
                "```cage-error block compiles",
                "a block without a language holds a policy",
                "the synopsis has no line for `cagec lint`"]
        text = "\n".join(c.errors)
        missed = [w for w in want if w not in text]
        if "--max-time" in text:
            missed.append("(an option after `--` was taken for cagerun's)")
        for m in missed:
            print(f"FAIL: self-test: not reported: {m}", file=sys.stderr)
        if missed:
            print(text, file=sys.stderr)
            return 1
        print(f"self-test: all {len(want)} planted mistakes reported")
        return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "--self-test":
        return self_test(argv[2], argv[3])
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    cagec, cagerun, src = argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        c = Checker(cagec, cagerun, tmp)
        check_tree(c, src)
    for e in c.errors:
        print(f"FAIL: {e}", file=sys.stderr)
    k = c.checked
    if k["cage"] == 0 or k["commands"] == 0:
        print("FAIL: nothing was checked (no ```cage block or no command)", file=sys.stderr)
        return 1
    print(f"docs: {k['cage']} ```cage blocks compile and are formatted, "
          f"{k['cage-error']} error examples fail, {k['commands']} commands exist; "
          f"{len(c.errors)} problems")
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
