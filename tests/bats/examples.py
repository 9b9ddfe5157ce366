#!/usr/bin/env python3
"""examples.py PAGE SCRIPT EXPECTED [--prompt PROGRAM]

The EXAMPLES of a man page are a promise: run one after the other in an
empty directory, each command prints what the page shows.  This writes the
commands of the EXAMPLES section of PAGE (the lines "$ ..." of its .nf or
.EX blocks) as a bash script, SCRIPT, and the transcript it should print,
EXPECTED: each command line, then its output, standard error too.

- roff escapes are undone (\\- \\e \\& \\(aq \\(dq \\(rs \\fB ...);
- a command goes on in the lines after it that start with the shell's
  "> " (or after a line ending in a backslash);
- a here document ("<<EOF" or "<<'EOF'") takes the lines up to "EOF";
- with --prompt PROGRAM, lines "PROGRAM IMAGE:DIR> COMMAND" after a
  command are a session at the program's prompt: the commands are fed to
  it on standard input, and only the other lines are its expected output
  (IMAGE must be the last word of the command that opened it).

The script runs each command in the same shell, with $? of the one before.
"""
import re
import shlex
import sys

ROFF = {"-": "-", "e": "\\", "&": "", "(aq": "'", "(dq": '"', "(rs": "\\",
        "fB": "", "fI": "", "fR": "", "fP": ""}


def text(line):
    return re.sub(r"\\(\(..|f.|.)", lambda m: ROFF[m.group(1)], line)


def example_lines(page):
    """The lines of the example blocks, None where a block ends."""
    lines, section, block = [], None, False
    for raw in open(page, encoding="utf-8").read().split("\n"):
        if raw.startswith(".SH"):
            section = raw
        elif section != ".SH EXAMPLES":
            continue
        elif raw in (".EX", ".nf", ".EE", ".fi"):
            block = raw in (".EX", ".nf")
            lines.append(None)  # a block ends, and the output of its last command
        elif block and raw not in (".RS", ".RE"):
            lines.append(text(raw))
    return lines


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--prompt"):
        sys.exit(__doc__.strip())
    page, script, expected = argv[:3]
    prompt = re.compile(r"^%s ([^ ]+):[^ ]*> (.*)$" % re.escape(argv[4])) \
        if len(argv) == 5 else None
    lines = example_lines(page)
    out, want, i = ["status=0"], [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line is None or not line.startswith("$ "):
            continue
        cmd, shown = line[2:], [line]
        while i < len(lines) and lines[i] is not None and \
                (cmd.endswith("\\") or lines[i].startswith("> ")):
            shown.append(lines[i])
            cmd += "\n" + re.sub(r"^> ", "", lines[i])
            i += 1
        if re.search(r"<<'?EOF'?$", cmd):
            while lines[i] != "EOF":
                shown.append(lines[i])
                cmd += "\n" + lines[i]
                i += 1
            shown.append("EOF")
            cmd += "\nEOF"
            i += 1
        want += shown
        session = []
        while i < len(lines) and lines[i] is not None and not lines[i].startswith("$ "):
            m = prompt.match(lines[i]) if prompt else None
            if m and m.group(1) != cmd.split()[-1]:
                sys.exit("a prompt names %s, the session opened %s" % (m.group(1), cmd))
            if m:
                session.append(m.group(2))
            else:
                want.append(lines[i])
            i += 1
        if session:
            cmd += " <<'SESSION'\n" + "\n".join(session) + "\nSESSION"
        out.append("printf '%s\\n' " + " ".join(shlex.quote(x) for x in shown))
        out.append('(exit "$status")  # for the $? of the next command')
        out.append("{ " + cmd + "\n} 2>&1; status=$?")
    open(script, "w").write("\n".join(out) + "\n")
    open(expected, "w").write("\n".join(want) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
