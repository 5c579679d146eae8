#!/usr/bin/env python3
"""Functions too long to read in one go (architecture.md, Conventions: "Functions about 80 lines").

Finds every function body in the C++ sources of the folders named that runs over a limit of
lines, prints each as FILE:LINE: its first line (N lines), and exits 1 when there is one:

    python3 tests/function_length.py --root . --limit 120 app views

The test function_length runs it over app/ and views/. A heuristic, not a parser: comments,
string literals (raw ones too), character literals and preprocessor lines are blanked first; then
a function is a brace block at namespace or class scope whose head ends with `)` and perhaps
qualifiers (const, noexcept, override, final, a trailing return type), or with a constructor's
member-initialiser list. Its length runs from the first line of its head (its template line, its
return type) to the closing brace. Lambdas and local classes count toward the function around them.
"""

import argparse
import pathlib
import re
import sys

SUFFIXES = (".cpp", ".h")


def raw_prefix(text, i):
    """Whether the quote at i opens a raw string literal (R"(, u8R"x(, LR"(...)."""
    m = re.search(r"(?:u8|u|U|L)?R$", text[max(0, i - 3):i])
    if not m:
        return False
    before = i - len(m.group(0)) - 1
    return before < 0 or not (text[before].isalnum() or text[before] == "_")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            wipe(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == '"' and raw_prefix(text, i):
            m = re.match(r'"([^()\\ \n]{0,16})\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i + m.end())
                j = n if end < 0 else end + len(m.group(1)) + 2
                wipe(i + 1, j - 1)
                i = j
            else:
                i += 1
        elif c == "'" and re.search(r"(?<![\w'])\d[\w']*$", text[max(0, i - 40):i]):
            i += 1  # a digit separator (1'000'000)
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


QUALIFIERS = r"(?:\s*(?:const|volatile|noexcept(?:\s*\([^()]*\))?|override|final|mutable|&&|&|" \
             r"->\s*[\w:<>,\s*&]+?))*"
FUNCTION_HEAD = re.compile(r"\)" + QUALIFIERS + r"\s*$")
# `) : member(...)` or `) noexcept : Base{...}`: a constructor's initialiser list has begun.
INIT_LIST = re.compile(r"\)" + QUALIFIERS + r"\s*:(?!:)")
# What may stand before a function's head with no semicolon: access specifiers, Q_OBJECT and its kind.
LEADING = re.compile(r"(?:(?:public|protected|private|signals|Q_SIGNALS)\s*(?:slots|Q_SLOTS)?\s*:(?!:)\s*"
                     r"|Q_[A-Z_]+\s*(?:\([^()]*\))?\s*)+")
ACCESS = re.compile(r"^\s*(?:(?:public|protected|private|signals|Q_SIGNALS)\s*(?:slots|Q_SLOTS)?\s*:(?!:)\s*)+")


def functions(text):
    """(first line, last line, head) of each function body of `text` (comments and literals blanked)."""
    found = []
    # Each open scope: kind ("scope" for a namespace, class or extern block; "function"; "other";
    # "init" for a member's braces inside an initialiser list), and where its head began.
    stack = []
    head_start = 0  # where the current statement's head began, at the innermost scope
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        in_scope = all(kind == "scope" for kind, _ in stack)
        if c == ";" and in_scope:
            head_start = i + 1
        elif c == "{":
            if not in_scope:
                stack.append(("other", head_start))
            else:
                head = text[head_start:i]
                flat = " ".join(head.split())
                body = ACCESS.sub("", flat)
                if body.count("(") > body.count(")") or (INIT_LIST.search(body) and re.search(r"[\w>]\s*$", body)
                                                        and not FUNCTION_HEAD.search(body)):
                    # A default argument's braces, or a member's in an initialiser list: the head goes on.
                    stack.append(("init", head_start))
                elif FUNCTION_HEAD.search(body) or (INIT_LIST.search(body) and re.search(r"[)}]\s*$", body)):
                    stack.append(("function", head_start))
                elif re.search(r"\b(?:namespace|class|struct|union)\b", body) and "=" not in body \
                        and not re.search(r"\benum\b", body) or re.match(r"^extern\s*\"", body):
                    stack.append(("scope", head_start))
                    head_start = i + 1
                else:
                    stack.append(("other", head_start))
        elif c == "}" and stack:
            kind, start = stack.pop()
            if kind == "function":
                first = start + len(text[start:i]) - len(text[start:i].lstrip())
                skipped = LEADING.match(text, first)
                first = skipped.end() if skipped else first
                found.append((first, i))
            if kind != "init" and all(k == "scope" for k, _ in stack):
                head_start = i + 1
        i += 1
    return found


def lines_of(text, first, last):
    return text.count("\n", 0, first) + 1, text.count("\n", 0, last) + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="paths are reported relative to it")
    parser.add_argument("--limit", type=int, default=120, help="the most lines a function may have")
    parser.add_argument("folders", nargs="+", help="folders under the root to scan")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    over = []
    count = 0
    for folder in args.folders:
        base = root / folder
        if not base.is_dir():
            print(f"function_length: no folder {base}", file=sys.stderr)
            return 2
        for path in sorted(p for p in base.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
            source = path.read_text(encoding="utf-8", errors="replace")
            blanked = blank(source)
            source_lines = source.splitlines()
            for first, last in functions(blanked):
                count += 1
                start, end = lines_of(blanked, first, last)
                # The head's first line, access specifiers and all, without the body's brace.
                shown = ACCESS.sub("", source_lines[start - 1]).strip() if start <= len(source_lines) else ""
                length = end - start + 1
                if length > args.limit:
                    over.append((length, path.relative_to(root).as_posix(), start, shown))
    for length, file, line, shown in sorted(over, key=lambda o: (o[1], o[2])):
        print(f"{file}:{line}: {shown} ({length} lines, over {args.limit})")
    if over:
        print(f"function_length: {len(over)} of {count} functions over {args.limit} lines "
              f"(architecture.md, Conventions): split each into named steps")
        return 1
    print(f"function_length: {count} functions, none over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
