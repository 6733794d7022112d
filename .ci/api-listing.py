#!/usr/bin/env python3
"""Prints a module's public API, one declaration per line, sorted, from the JSON that
`swift-api-digester -dump-sdk` writes: the text .ci/check-api compares with Docs/API/."""
import json
import sys

# Conformances every type has, whose listing changes with the toolchain, not with us.
IMPLICIT = {"Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"}
# The module being listed (set from the dump): an extended standard type lists only the
# conformances this module adds.
MODULE = ""
# Internal protocols of the modules, which the digester reports on extended types.
INTERNAL = {"PlannableExpression", "PlannableOperand", "PlannableRange", "PlannableVariable", "OrderExactKey",
            "EqualityExactKey", "CompositeKey", "OptionalKeyComponent"}


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
        # A type of another module extended here: only the public conformances this module
        # adds (internal protocols the digester also reports are not API).
        own = f"s:{len(MODULE)}{MODULE}"
        conformances = sorted(c.get("printedName", "") for c in node.get("conformances", [])
                              if c.get("printedName") not in IMPLICIT
                              and (not node.get("isExternal") or c.get("usr", "").startswith(own))
                              and c.get("printedName") not in INTERNAL)
        suffix = f" : {', '.join(conformances)}" if conformances else ""
        if not node.get("isExternal") or conformances:
            lines.add(f"{declaration}{tag} {qualified}{suffix}")
        for child in node.get("children", []):
            walk(child, path + [node.get("name", name)], lines)
    else:
        lines.add(f"{declaration}{tag} {qualified} -> {signature(node)}")


def main():
    global MODULE
    with open(sys.argv[1]) as handle:
        root = json.load(handle)["ABIRoot"]
    MODULE = root.get("name", "")
    lines = set()
    walk(root, [], lines)
    sys.stdout.write("".join(line + "\n" for line in sorted(lines)))


main()
