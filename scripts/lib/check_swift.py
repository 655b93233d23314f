"""Syntax check of Swift sources with tree-sitter-swift (no Swift compiler runs here).

Usage: python check_swift.py FILE.swift...

Every ERROR or MISSING node is a failure, except where the grammar misreads one of two valid
constructs that UniFFI's generated Swift uses:
  - the attribute `@_documentation(visibility: private)`, and
  - the empty closure `{ () }` (the ERROR node is the `()` between the braces).
Prints each file with its count and every unexplained error; exits 1 if there is any.
"""

import sys

import tree_sitter
import tree_sitter_swift

DOC_ATTRIBUTE = b"@_documentation(visibility: private)"


def explained(src: bytes, node) -> bool:
    text = src[node.start_byte:node.end_byte]
    if node.type != "ERROR":
        return False
    if text == DOC_ATTRIBUTE:
        return True
    if text == b"()":
        before = src[:node.start_byte].rstrip()
        after = src[node.end_byte:].lstrip()
        return before.endswith(b"{") and after.startswith(b"}")
    return False


def problems(tree, src: bytes):
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            yield node
        stack.extend(node.children)


def main(paths) -> int:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_swift.language()))
    failed = 0
    for path in paths:
        src = open(path, "rb").read()
        found = list(problems(parser.parse(src), src))
        allowed = [n for n in found if explained(src, n)]
        bad = [n for n in found if not explained(src, n)]
        print(f"{path}: {len(bad)} syntax errors ({len(allowed)} known misreads of valid UniFFI constructs)")
        for node in sorted(bad, key=lambda n: n.start_byte):
            line, column = node.start_point
            kind = "missing " + node.type if node.is_missing else "error"
            snippet = src[node.start_byte:node.end_byte][:80].decode("utf-8", "replace")
            print(f"  {path}:{line + 1}:{column + 1}: {kind}: {snippet!r}")
        failed += len(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
