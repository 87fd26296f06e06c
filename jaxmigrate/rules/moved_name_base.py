"""The moved-name rule that JM201 (sharding names) and JM601 (the `jax.tree_*` aliases) share: one
rule over the ``catalog.moves`` table, for the moves that name it as their owner. It decides what
moves and reports it; the text of every rewrite comes from the one renamer, ``patterns/renames.py``."""

from __future__ import annotations

import ast
import re
from typing import ClassVar, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.catalog.moves import (
    BY_OLD,
    MODULE_IMPORTS,
    MOVES,
    REMOVED_MODULES,
    REMOVED_NAMES,
    Move,
    applies,
    best_for_uses,
    premature,
)
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.patterns.renames import rewrite_from_import, rewrite_module_import, rewrite_module_path, rewrite_use
from jaxmigrate.prefilter import GAP, ModuleAttributeSearch, gap_start, raw
from jaxmigrate.rules.base import Rule

# `jax.config.config` (and the `jax.config` module imported as such): an attribute `config` of a
# name bound to the `jax.config` module. Such a name is `config` itself or an alias of it (`config
# as c`, `c = config`), or comes from `import jax.config`, `from jax.config import config` or
# `c = jax.config`; `jax.config.update(...)`, the current API, matches none of these.
CONFIG_NAMES = {m.old for m in MOVES if m.old.startswith("jax.config.")}
CONFIG_ATTRIBUTE = ModuleAttributeSearch("config", (b"config",))
_JAX_CONFIG = rb"jax[\s\\]*\.[\s\\]*config\b"
JAX_CONFIG_PATTERNS = (
    re.compile(rb"from[\s\\]+" + _JAX_CONFIG),
    re.compile(rb"import[\s\\(]+(?:[\w.\s,\\]*,[\s\\]*)?" + _JAX_CONFIG),
    re.compile(rb"=[\s\\(]*" + _JAX_CONFIG + rb"(?![\s\\)]*\.)"),
)
_IMPORT_JAX_CONFIG = JAX_CONFIG_PATTERNS[1]
_CONFIG_WORD = re.compile(rb"config\b")
_UNDOTTED = re.compile(rb"(?![\s\\)]*\.)")


def config_module_use(data: bytes) -> bool:
    """Whether ``CONFIG_ATTRIBUTE`` or one of ``JAX_CONFIG_PATTERNS`` matches ``data``, in one
    pass over the word `config` that each has; for `jax.config`, what precedes it is read
    backwards (each pattern led by its own literal would stop at every `from`, `import` or `=`)."""
    listed = None  # whether `import a, jax.config` matches, once it was searched
    for match in _CONFIG_WORD.finditer(data):
        start = match.start()
        if CONFIG_ATTRIBUTE.at(data, start):
            return True
        dot = gap_start(data, start) - 1
        if dot < 0 or data[dot] != 0x2E:  # `.`
            continue
        start = gap_start(data, dot) - 3
        if start < 0 or not data.startswith(b"jax", start):
            continue
        before = gap_start(data, start)
        if before < start and data.endswith(b"from", 0, before):
            return True
        if before and data[before - 1] == 0x2C and listed is None:  # `,`: rare, searched with the regex
            listed = _IMPORT_JAX_CONFIG.search(data) is not None
            if listed:
                return True
        before = gap_start(data, start, GAP + b"(")
        if before < start and data.endswith(b"import", 0, before):
            return True
        if before and data[before - 1] == 0x3D and _UNDOTTED.match(data, match.end()):  # `=`
            return True
    return False


class MovedNameRule(Rule):
    """The rule over the moves whose ``rule`` is the subclass's code."""

    #: also the table's moved modules, `import jax.config`, and the unused imports of the removed
    #: modules and names (JM201)
    removals: ClassVar[bool] = False

    @classmethod
    def wants(cls, data) -> bool:
        return super().wants(data) or (cls.removals and b"config" in data and config_module_use(raw(data)))

    def _move(self, qualname: Optional[str]) -> Optional[Move]:
        move = BY_OLD.get(qualname or "")
        return move if move is not None and move.rule == self.code else None

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in ctx.nodes(ast.ImportFrom):
            blocked: List[Finding] = []
            finding = self._import_from(ctx, node, blocked)
            yield from blocked
            if finding:
                yield finding
        yield from self._uses_without_replacement(ctx)
        if ctx.resolver.stars:
            yield from self._star_uses(ctx)
        if self.removals:
            for imp in ctx.nodes(ast.Import):
                yield from self._import(ctx, imp)
        for attr, _ in ctx.qualified(ast.Attribute):
            finding = self._attribute(ctx, attr)
            if finding:
                yield finding

    # `from X import a, b as c` -----------------------------------------------------------
    def _import_from(self, ctx: FileContext, node: ast.ImportFrom, blocked: List[Finding]) -> Optional[Finding]:
        """The fix for one ``from`` import; names whose replacement the target lacks go to ``blocked``."""
        if node.level or not node.module:
            return None
        module_move = _module_move(node.module, ctx.target) if self.removals else None
        if module_move is not None:
            new_module = module_move.new + node.module[len(module_move.old):]
            return self.finding(ctx, node, f"`{node.module}` moved to `{new_module}`",
                                Fix("safe", edits=(rewrite_module_path(ctx, node, new_module),)), replacement=new_module)
        moved: List[Tuple[ast.alias, Move]] = []
        for alias in node.names:
            move = self._move(f"{node.module}.{alias.name}") or self._move(canonical(f"{node.module}.{alias.name}"))
            if move is not None and applies(move, ctx.target):
                moved.append((alias, move))
            elif move is not None and not premature(move, ctx.target):
                note = f": {move.note}" if move.note else ""
                blocked.append(self.finding(ctx, alias, f"`{move.old}` no longer exists in JAX and `{move.new}` does not "
                                            f"exist in the target JAX either{note}"))
        removed = self._unused_removed_aliases(ctx, node) if self.removals else []
        if not moved and not removed:
            return None
        edits = rewrite_from_import(ctx, node, [(a, m.new) for a, m in moved], removed, rename_uses=True)
        parts = [f"`{node.module}.{a.name}` moved to `{m.new}`" for a, m in moved]
        parts += [f"`{node.module}.{a.name}` no longer exists and is unused" for a in removed]
        return self.finding(ctx, node, "; ".join(parts), Fix("safe", edits=tuple(edits)),
                            replacement=", ".join(m.new for _, m in moved) or None)

    def _uses_without_replacement(self, ctx: FileContext) -> Iterator[Finding]:
        """Each use of an imported name whose replacement the target lacks (the import is reported too)."""
        for name, qual in ctx.qualified(ast.Name):
            if not isinstance(name.ctx, ast.Load):
                continue
            move = self._move(qual)
            if move is not None and not move.module and not applies(move, ctx.target) and not premature(move, ctx.target):
                note = f": {move.note}" if move.note else ""
                yield self.finding(ctx, name, f"`{name.id}` (`{move.old}`) no longer exists in JAX and `{move.new}` does "
                                   f"not exist in the target JAX either{note}")

    def _star_uses(self, ctx: FileContext) -> Iterator[Finding]:
        """Each use of a moved name that only a star import binds (``from jax.experimental.maps
        import *``, then ``Mesh``): the use is given the new name (the star import stays)."""
        for name, qual in ctx.qualified(ast.Name):
            move = self._move(qual)
            if move is None or move.module or not isinstance(name.ctx, ast.Load) or not applies(move, ctx.target):
                continue
            if all(isinstance(b.node, ast.ImportFrom) and b.node.names[0].name == "*" for b in ctx.bindings(name)):
                best = best_for_uses(move, ctx.target)
                yield self.finding(ctx, name, f"`{qual}` moved to `{best}`", rewrite_use(ctx, name, move.old, best, "safe"),
                                   replacement=best)

    def _unused_removed_aliases(self, ctx: FileContext, node: ast.ImportFrom) -> List[ast.alias]:
        """The aliases of removed modules, and of removed names (in the target), that nothing reads."""
        out = []
        for alias in node.names:
            qual = f"{node.module}.{alias.name}"
            removed_in = REMOVED_NAMES.get(canonical(qual))
            if qual in REMOVED_MODULES or removed_in is not None and ctx.target_at_least(removed_in):
                local = alias.asname or alias.name
                if not uses_of_local(ctx, local, canonical(qual)):
                    out.append(alias)
        return out

    # `import X.Y as Z` -------------------------------------------------------------------
    def _import(self, ctx: FileContext, node: ast.Import) -> Iterator[Finding]:
        for alias in node.names:
            move = _module_move(alias.name, ctx.target)
            if move is not None:
                new = move.new + alias.name[len(move.old):]
                yield self.finding(ctx, alias, f"`{alias.name}` moved to `{new}`",
                                   Fix("safe", edits=(rewrite_module_import(ctx, alias, new),)), replacement=new)
            elif alias.name in MODULE_IMPORTS and not alias.asname:
                yield self.dropped_import(ctx, node, alias, f"the `{alias.name}` submodule was removed in JAX 0.4.29: "
                                        f"`import {MODULE_IMPORTS[alias.name]}` gives the same names")
            elif alias.name in REMOVED_MODULES:
                local = alias.asname or alias.name.split(".")[0]
                if alias.asname and uses_of_local(ctx, local, alias.name):
                    continue
                if not alias.asname and module_path_used(ctx, alias.name):
                    continue
                yield self.dropped_import(ctx, node, alias)

    # `maps.Mesh`, `jax.experimental.PartitionSpec` ---------------------------------------
    def _attribute(self, ctx: FileContext, node: ast.Attribute) -> Optional[Finding]:
        qual = ctx.qualname(node)
        move = self._move(qual)
        if move is None:
            return None
        if premature(move, ctx.target):
            return None
        if not applies(move, ctx.target):
            note = f": {move.note}" if move.note else ""
            return self.finding(ctx, node, f"`{qual}` no longer exists in JAX; `{move.new}` does not exist in the "
                                f"target JAX either{note}")
        best = best_for_uses(move, ctx.target)
        fix = rewrite_use(ctx, node, move.old, best, "safe", module=move.module)
        return self.finding(ctx, node, f"`{qual}` moved to `{best}`", fix, replacement=best)



# helpers -------------------------------------------------------------------------------
def _module_move(module: str, target) -> Optional[Move]:
    """The move of a module path, where the target has the new module (before that, the old one is right)."""
    for move in MOVES:
        if move.module and (module == move.old or module.startswith(move.old + ".")) and applies(move, target):
            return move
    return None


def uses_of_local(ctx: FileContext, local: str, qual: str) -> bool:
    return bool(ctx.loads_of(local, qual))


def module_path_used(ctx: FileContext, module: str) -> bool:
    """Whether any attribute chain goes through ``module`` (e.g. ``jax.experimental.maps.xmap``)."""
    return any(isinstance(n, ast.Attribute) for n in ctx.references(module))


