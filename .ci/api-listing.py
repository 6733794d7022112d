#!/usr/bin/env python3
"""Prints a module's public API, one declaration per line, sorted, from the JSON that
`swift-api-digester -dump-sdk` writes: the text .ci/check-api compares with Docs/API/."""
import json
import sys

# Conformances every type has, whose listing changes with the toolchain, not with us.
IMPLICIT = {"Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"}
# A standard type extended by a Folio module: list only the conformances Folio adds.
OURS = "Folio"


def signature(node):
    """The declaration's type as the digester prints it (its first type child)."""
    for child in node.get("children", []):
        if child.get("kind", "").startswith("Type"):
            return child.get("printedName", "")
    return ""


def walk(node, path, lines):
    kind = node.get("kind")
    if kind in ("Root",):
        for child in node.get("children", []):
            walk(child, path, lines)
        return
    if kind == "Import" or kind.startswith("Type") and kind not in ("TypeDecl", "TypeAlias"):
        return
    if node.get("isInternal"):
        return  # `package` declarations: shared between this package's modules, not public
    name = node.get("printedName", node.get("name", ""))
    declaration = node.get("declKind", kind)
    spi = node.get("spi_group_names")
    tag = f" @_spi({','.join(spi)})" if spi else ""
    qualified = ".".join(path + [name])
    if kind == "TypeDecl":
        conformances = sorted(c.get("printedName", "") for c in node.get("conformances", [])
                              if c.get("printedName") not in IMPLICIT
                              and (not node.get("isExternal") or OURS in c.get("usr", "")))
        suffix = f" : {', '.join(conformances)}" if conformances else ""
        lines.add(f"{declaration}{tag} {qualified}{suffix}")
        for child in node.get("children", []):
            walk(child, path + [node.get("name", name)], lines)
    else:
        lines.add(f"{declaration}{tag} {qualified} -> {signature(node)}")


def main():
    with open(sys.argv[1]) as handle:
        root = json.load(handle)["ABIRoot"]
    lines = set()
    walk(root, [], lines)
    sys.stdout.write("".join(line + "\n" for line in sorted(lines)))


main()
