#!/usr/bin/env python3
"""Lists functions longer than a limit (120 lines) in src/, auth/ and tools/.

A function is a brace block opened outside any other function whose header has a
parameter list; namespaces, classes and initialisers are looked through. Strings,
character literals and comments are skipped, so braces in them do not count.
Usage: scripts/check-function-length.py [--limit N] [dirs...]; exits 1 if any is over.
"""
import pathlib
import re
import sys

CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s+\"C\"|=\s*$")


def strip(text):
    """Blanks out comments and literals, keeping newlines so line numbers hold."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path, limit):
    text = strip(path.read_text(encoding="utf-8", errors="replace"))
    stack = []  # (kind, start line, header)
    header, line = "", 1
    found = []
    for c in text:
        if c == "\n":
            line += 1
        if c == "{":
            inside_function = any(kind == "fn" for kind, _, _ in stack)
            h = header.strip()
            if not inside_function and "(" in h and not CONTAINER.search(h):
                name = re.findall(r"([~\w:<>]+)\s*\(", h)
                stack.append(("fn", line, name[0] if name else h[-40:]))
            else:
                stack.append(("block", line, ""))
            header = ""
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "fn" and not any(k == "fn" for k, _, _ in stack):
                    length = line - start + 1
                    if length > limit:
                        found.append((length, f"{path}:{start}: {name} is {length} lines"))
            header = ""
        elif c == ";":
            header = ""
        else:
            header += c
    return found


def main(argv):
    limit = 120
    if argv[:1] == ["--limit"]:
        limit, argv = int(argv[1]), argv[2:]
    dirs = argv or ["src", "auth", "tools"]
    found = []
    for d in dirs:
        for p in sorted(pathlib.Path(d).rglob("*")):
            if p.suffix in (".cc", ".h"):
                found += long_functions(p, limit)
    for _, message in sorted(found, reverse=True):
        print(message)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
