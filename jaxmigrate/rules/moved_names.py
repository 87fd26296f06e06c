"""JM201 moved names (one generic rewriter over the ``moves`` table) and JM203 removed ``maps`` APIs."""

from __future__ import annotations

import ast
import re
from typing import ClassVar, Dict, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import GAP, ModuleAttributeSearch, canonical, gap_start, name_triggers
from jaxmigrate.analysis.statements import (
    alias_comments,
    delete_statement,
    newline,
    render_import_from,
    render_without_names,
    replace_statement,
    statement_prefix,
    trailing_text,
)
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
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.xmap_advice import XMAP, shard_map_advice
from jaxmigrate.prefilter import raw
from jaxmigrate.rules.base import Example, Rule, snippet

# `jax.config.config` (and the `jax.config` module imported as such): an attribute `config` of a
# name bound to the `jax.config` module. Such a name is `config` itself or an alias of it (`config
# as c`, `c = config`), or comes from `import jax.config`, `from jax.config import config` or
# `c = jax.config`; `jax.config.update(...)`, the current API, matches none of these.
_CONFIG = {m.old for m in MOVES if m.old.startswith("jax.config.")}
_CONFIG_ATTRIBUTE = ModuleAttributeSearch("config", (b"config",))
_JAX_CONFIG = rb"jax[\s\\]*\.[\s\\]*config\b"
_JAX_CONFIG_PATTERNS = (
    re.compile(rb"from[\s\\]+" + _JAX_CONFIG),
    re.compile(rb"import[\s\\(]+(?:[\w.\s,\\]*,[\s\\]*)?" + _JAX_CONFIG),
    re.compile(rb"=[\s\\(]*" + _JAX_CONFIG + rb"(?![\s\\)]*\.)"),
)
_IMPORT_JAX_CONFIG = _JAX_CONFIG_PATTERNS[1]
_CONFIG_WORD = re.compile(rb"config\b")
_UNDOTTED = re.compile(rb"(?![\s\\)]*\.)")


def _config_module_use(data: bytes) -> bool:
    """Whether ``_CONFIG_ATTRIBUTE`` or one of ``_JAX_CONFIG_PATTERNS`` matches ``data``, in one
    pass over the word `config` that each has; for `jax.config`, what precedes it is read
    backwards (each pattern led by its own literal would stop at every `from`, `import` or `=`)."""
    listed = None  # whether `import a, jax.config` matches, once it was searched
    for match in _CONFIG_WORD.finditer(data):
        start = match.start()
        if _CONFIG_ATTRIBUTE.at(data, start):
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


def _last(qualname: str) -> str:
    return qualname.rpartition(".")[2]


class MovedName(Rule):
    """
    ## What it does
    Rewrites imports and uses of JAX names that moved, from one table: `jax.experimental.maps.Mesh`
    and the lowercase `maps.mesh(devices, names)` context manager → `jax.sharding.Mesh`;
    `jax.experimental.PartitionSpec`, `jax.experimental.pjit.PartitionSpec` and
    `jax.interpreters.pxla.PartitionSpec` → `jax.sharding.PartitionSpec`;
    `jax.experimental.pjit.NamedSharding` and `MeshPspecSharding` → `jax.sharding.NamedSharding`;
    `OpShardingSharding` → `GSPMDSharding` (for targets before 0.6.0, where it still exists);
    `jax.experimental.pjit.with_sharding_constraint` → `jax.lax.with_sharding_constraint`;
    `jax.experimental.gda_serialization` → `jax.experimental.array_serialization`;
    `from jax.config import config` → `from jax import config` and `import jax.config` → `import jax`
    (the submodule is gone since 0.4.29); `jax.sharding.use_mesh` → `jax.set_mesh` (0.7.1).

    An import is rewritten in place (aliases such as `P` or `PS` are kept, and a `from` import
    that mixes moved and other names is split, a comment on a moved name's line going with it);
    a dotted use such as `maps.Mesh(...)` is replaced by a name the module already has for the
    new object, else `jax.sharding.Mesh` through an imported `jax`, else a new import. An import
    of the removed `jax.experimental.maps` module, or of the removed `FROM_GDA`, that nothing
    uses any more is dropped (JM503 migrates the uses of `FROM_GDA`).

    ## Why is this bad?
    These names were removed from JAX between 0.4.8 and 0.4.14 (`jax.experimental.maps` is
    gone entirely in current releases): the import fails before any code runs.
    """

    code = "JM201"
    name = "moved-sharding-name"
    summary = "moved sharding names (`maps.Mesh`, `experimental.PartitionSpec`, ...) → `jax.sharding`"
    fix_safety = "safe"
    # the names of the table (and the removed modules), in the words of the file; `jax.config.config`
    # (the config submodule) has patterns of its own: its parts alone ("config") would let most files in
    triggers, _module_parts = name_triggers(
        [m.old for m in MOVES if m.family == "sharding" and m.old not in _CONFIG] + list(REMOVED_MODULES)
        + list(REMOVED_NAMES))
    requires: ClassVar[Tuple[Tuple[bytes, ...], ...]] = (_module_parts,)
    deprecated_in = "0.4.4"
    removed_in = "0.4.11"
    replacement_since = "0.4.1"
    examples: ClassVar[Tuple[Example, ...]] = (
        Example(
            snippet("""
                from jax.experimental import PartitionSpec as PS
                from jax.experimental.maps import Mesh
            """),
            snippet("""
                from jax.sharding import Mesh, PartitionSpec as PS
            """),
            title="imports keep their aliases",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental import maps

                def run(devices):
                    with maps.mesh(devices, ("dp", "mp")):
                        pass
            """),
            snippet("""
                import jax

                def run(devices):
                    with jax.sharding.Mesh(devices, ("dp", "mp")):
                        pass
            """),
            title="the lowercase `maps.mesh` context manager becomes a `Mesh`",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import pjit, PartitionSpec as P
            """),
            snippet("""
                from jax.sharding import PartitionSpec as P
                from jax.experimental.pjit import pjit
            """),
            title="a mixed import is split",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import (
                    pjit,  # still here
                    PartitionSpec as P,  # the spec alias
                    FROM_GDA,
                )
            """),
            snippet("""
                from jax.sharding import PartitionSpec as P  # the spec alias
                from jax.experimental.pjit import (
                    pjit,  # still here
                )
            """),
            title="comments go with their names; the removed `FROM_GDA`, unused, is dropped",
        ),
        Example(
            snippet("""
                class Config:
                    mesh_axes = ("data",)

                def build(cfg, mesh):
                    return mesh.shape, cfg.mesh_axes
            """),
            title="`.mesh` and `.mesh_axes` on other objects are not JAX's",
        ),
    )

    family = "sharding"

    @classmethod
    def wants(cls, data) -> bool:
        return super().wants(data) or (cls.family == "sharding" and b"config" in data
                                       and _config_module_use(raw(data)))

    def _move(self, qualname: Optional[str]) -> Optional[Move]:
        move = BY_OLD.get(qualname or "")
        return move if move is not None and move.family == self.family else None

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in ctx.nodes(ast.ImportFrom):
            blocked: List[Finding] = []
            finding = self._import_from(ctx, node, blocked)
            yield from blocked
            if finding:
                yield finding
        yield from self._uses_without_replacement(ctx)
        if self.family == "sharding":
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
        module_move = _module_move(node.module, ctx.target) if self.family == "sharding" else None
        if module_move is not None:
            new_module = module_move.new + node.module[len(module_move.old):]
            edit = _module_span_edit(ctx, node, node.module, new_module)
            if edit is None:  # an unusual layout (a backslash after `from`): rebuild the statement
                names = ", ".join(ctx.text(a) for a in node.names)
                edit = ctx.replace(node, f"from {new_module} import {names}")
            return self.finding(ctx, node, f"`{node.module}` moved to `{new_module}`", Fix("safe", edits=(edit,)))
        moved: List[Tuple[ast.alias, Move]] = []
        for alias in node.names:
            move = self._move(f"{node.module}.{alias.name}") or self._move(canonical(f"{node.module}.{alias.name}"))
            if move is not None and applies(move, ctx.target):
                moved.append((alias, move))
            elif move is not None and not premature(move, ctx.target):
                note = f": {move.note}" if move.note else ""
                blocked.append(self.finding(ctx, alias, f"`{move.old}` no longer exists in JAX and `{move.new}` does not "
                                            f"exist in the target JAX either{note}"))
        removed = self._unused_removed_aliases(ctx, node) if self.family == "sharding" else []
        if not moved and not removed:
            return None
        edits: List[Edit] = []
        groups: Dict[str, List[Tuple[str, Optional[str]]]] = {}
        comments = alias_comments(ctx.text(node), {(a.name, a.asname) for a, _ in moved})
        for alias, move in moved:
            text, renames = self._moved_alias(ctx, node, alias, move)
            groups.setdefault(move.new.rpartition(".")[0], []).append((text, comments.get((alias.name, alias.asname))))
            edits.extend(renames)
        gone = {id(a) for a, _ in moved} | {id(a) for a in removed}
        kept = [a for a in node.names if id(a) not in gone]
        simple = not kept and len(groups) == 1 and not edits and all(
            a.name == _last(m.new) for a, m in moved
        )
        if simple:
            module_edit = _module_span_edit(ctx, node, node.module, next(iter(groups)))
            if module_edit is not None:
                edits.append(module_edit)
                return self._import_finding(ctx, node, moved, removed, edits)
        # a moved name's comment goes with it, at the end of its line unless code follows there
        prefix = statement_prefix(ctx, node)
        own_lines = prefix.strip() == ""
        last_free = own_lines and (bool(kept) or not trailing_text(ctx, node))
        new_lines = [render_import_from(mod, items, own_lines and (i < len(groups) - 1 or last_free), prefix, newline(ctx))
                     for i, (mod, items) in enumerate(groups.items())]
        if kept:
            new_lines.append(render_without_names(ctx.text(node), {(a.name, a.asname) for a in node.names if id(a) in gone}))
        edits.append(replace_statement(ctx, node, new_lines) if new_lines else delete_statement(ctx, node))
        return self._import_finding(ctx, node, moved, removed, edits)

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

    def _import_finding(self, ctx, node, moved, removed, edits) -> Finding:
        parts = [f"`{node.module}.{a.name}` moved to `{m.new}`" for a, m in moved]
        parts += [f"`{node.module}.{a.name}` no longer exists and is unused" for a in removed]
        return self.finding(ctx, node, "; ".join(parts), Fix("safe", edits=tuple(edits)))

    def _moved_alias(self, ctx: FileContext, node: ast.ImportFrom, alias: ast.alias, move: Move) -> Tuple[str, List[Edit]]:
        """The alias text in the new import, and the edits renaming its uses if the name changes."""
        new_name = _last(move.new)
        if alias.asname:
            return (new_name if alias.asname == new_name else f"{new_name} as {alias.asname}"), []
        if alias.name == new_name:
            return new_name, []
        if ctx.resolver.bound_in_any_scope(new_name):
            return f"{new_name} as {alias.name}", []
        old_qual = canonical(f"{node.module}.{alias.name}")
        renames = [ctx.replace(n, new_name) for n in ctx.loads_of(alias.name, old_qual)]
        return new_name, renames

    def _unused_removed_aliases(self, ctx: FileContext, node: ast.ImportFrom) -> List[ast.alias]:
        """The aliases of removed modules, and of removed names (in the target), that nothing reads."""
        out = []
        for alias in node.names:
            qual = f"{node.module}.{alias.name}"
            removed_in = REMOVED_NAMES.get(canonical(qual))
            if qual in REMOVED_MODULES or removed_in is not None and ctx.target_at_least(removed_in):
                local = alias.asname or alias.name
                if not _uses_of_local(ctx, local, canonical(qual)):
                    out.append(alias)
        return out

    # `import X.Y as Z` -------------------------------------------------------------------
    def _import(self, ctx: FileContext, node: ast.Import) -> Iterator[Finding]:
        for alias in node.names:
            move = _module_move(alias.name, ctx.target)
            if move is not None:
                new = move.new + alias.name[len(move.old):]
                yield self.finding(
                    ctx, alias, f"`{alias.name}` moved to `{new}`",
                    Fix("safe", edits=(ctx.replace(alias, new + (f" as {alias.asname}" if alias.asname else "")),)),
                )
            elif alias.name in MODULE_IMPORTS and not alias.asname and self.family == "sharding":
                yield self.dropped_import(ctx, node, alias, f"the `{alias.name}` submodule was removed in JAX 0.4.29: "
                                        f"`import {MODULE_IMPORTS[alias.name]}` gives the same names")
            elif alias.name in REMOVED_MODULES:
                local = alias.asname or alias.name.split(".")[0]
                if alias.asname and _uses_of_local(ctx, local, alias.name):
                    continue
                if not alias.asname and _module_path_used(ctx, alias.name):
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
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        root_qual = ctx.qualname(root) or ""
        imports: Tuple[ImportRef, ...] = ()
        if move.module and (move.new + ".").startswith(root_qual + "."):
            text = ctx.text(root) + move.new[len(root_qual):]
        else:
            text, imports = ctx.reference(best_for_uses(move, ctx.target), at=node)
        drops = ctx.root_import(root)
        fix = Fix("safe", edits=(ctx.replace(node, text),), add_imports=imports, drop_unused_imports=drops)
        return self.finding(ctx, node, f"`{qual}` moved to `{best_for_uses(move, ctx.target)}`", fix)


class RemovedMapsApi(Rule):
    """
    ## What it does
    Reports uses of `jax.experimental.maps` other than `Mesh`/`mesh` (which JM201 rewrites):
    `xmap`, `thread_resources`, `ResourceEnv`, `SerialLoop` and the rest. They have no
    mechanical replacement. An `xmap` call whose `in_axes`, `out_axes` and `axis_resources` are
    literals is reported with the `jax.shard_map` call to write: the same dimensions partitioned
    over the same mesh axes (`["batch", ...]` with `{"batch": "dp"}` → `P("dp")`), with a note
    on what changes inside the function (collectives name mesh axes; named dimensions become
    blocks).

    ## Why is this bad?
    The `jax.experimental.maps` module was deprecated in JAX 0.4.26 and is gone in current
    releases. `xmap` is replaced by `jax.shard_map` (or `jax.jit` with shardings);
    `thread_resources.env = ResourceEnv(mesh)` by entering the mesh (`with mesh:`, or
    `jax.set_mesh(mesh)` on JAX 0.7.1 and later) and passing it where it is needed.
    """

    code = "JM203"
    name = "removed-maps-api"
    summary = "`jax.experimental.maps` APIs without a direct replacement (xmap, thread_resources, ...)"
    fix_safety = None
    triggers, _module_parts = name_triggers(REMOVED_MODULES)
    requires: ClassVar[Tuple[Tuple[bytes, ...], ...]] = (_module_parts,)
    deprecated_in = "0.4.26"
    removed_in = "0.4.31"
    examples = (
        Example(
            snippet("""
                from jax.experimental.maps import xmap

                f = xmap(lambda x: x, in_axes=["i"], out_axes=["i"])
            """),
            snippet("""
                from jax.experimental.maps import xmap

                f = xmap(lambda x: x, in_axes=["i"], out_axes=["i"])
            """),
            flagged=True,
        ),
        Example(
            snippet("""
                from jax.experimental import maps

                step = maps.xmap(lambda p, b: p * b, in_axes=(["shard", ...], ["batch", ...]), out_axes=["batch", ...],
                                 axis_resources={"shard": "mp", "batch": "dp"})
            """),
            snippet("""
                from jax.experimental import maps

                step = maps.xmap(lambda p, b: p * b, in_axes=(["shard", ...], ["batch", ...]), out_axes=["batch", ...],
                                 axis_resources={"shard": "mp", "batch": "dp"})
            """),
            flagged=True,
            title="an xmap call with literal axes is reported with the shard_map call to write",
        ),
    )

    ADVICE = {
        "xmap": "rewrite with `jax.shard_map` (named axes become mesh axes) or `jax.jit` with shardings",
        "thread_resources": "enter the mesh with `with mesh:` (or `jax.set_mesh(mesh)` on JAX >= 0.7.1) and pass it explicitly",
        "ResourceEnv": "enter the mesh with `with mesh:` (or `jax.set_mesh(mesh)` on JAX >= 0.7.1) "
                       "instead of building a ResourceEnv",
    }

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in ctx.nodes(ast.ImportFrom):
            if node.level == 0 and node.module in REMOVED_MODULES:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in BY_OLD:
                        yield self._report(ctx, alias, node.module, alias.name)
            elif node.level == 0 and node.module:
                for alias in node.names:
                    module = f"{node.module}.{alias.name}"
                    if module in REMOVED_MODULES and _uses_of_local(ctx, alias.asname or alias.name, module):
                        yield self._module_import(ctx, alias, module)
        for imp in ctx.nodes(ast.Import):
            for alias in imp.names:
                if alias.name in REMOVED_MODULES and (
                    _uses_of_local(ctx, alias.asname, alias.name) if alias.asname else _module_path_used(ctx, alias.name)
                ):
                    yield self._module_import(ctx, alias, alias.name)
        advice = {}  # xmap calls with literal axes: the shard_map call to write
        for call, _ in ctx.calls_to(XMAP):
            suggestion = shard_map_advice(call, ctx.text)
            if suggestion is not None:
                advice[id(call.func)] = suggestion
                if isinstance(call.func, ast.Name):  # `from ... import xmap`: the import is reported, the call too
                    yield self.finding(ctx, call, "`xmap` was removed from JAX: rewrite this call with `jax.shard_map`",
                                       suggestion=suggestion)
        for attr, qual in ctx.qualified(ast.Attribute):
            module, _, name = qual.rpartition(".")
            if module in REMOVED_MODULES and qual not in BY_OLD:
                if id(attr) in advice:
                    yield self.finding(ctx, attr, f"`{qual}` was removed from JAX: rewrite this call with `jax.shard_map`",
                                       suggestion=advice[id(attr)])
                else:
                    yield self._report(ctx, attr, module, name)

    def _module_import(self, ctx: FileContext, node: ast.AST, module: str) -> Finding:
        return self.finding(ctx, node, f"`{module}` no longer exists: this import fails on current JAX; the uses "
                            "reported below it need a manual migration")

    def _report(self, ctx: FileContext, node: ast.AST, module: str, name: str) -> Finding:
        advice = self.ADVICE.get(name, "it has no replacement in current JAX; see the JAX changelog")
        return self.finding(ctx, node, f"`{module}.{name}` was removed from JAX: {advice}")


# helpers -------------------------------------------------------------------------------
def _module_move(module: str, target) -> Optional[Move]:
    """The move of a module path, where the target has the new module (before that, the old one is right)."""
    for move in MOVES:
        if move.module and (module == move.old or module.startswith(move.old + ".")) and applies(move, target):
            return move
    return None


def _module_span_edit(ctx: FileContext, node: ast.ImportFrom, old: str, new: str) -> Optional[Edit]:
    text = ctx.text(node)
    pattern = re.compile(r"from\s+(" + r"\s*\.\s*".join(map(re.escape, old.split("."))) + r")\b")
    match = pattern.match(text)
    if match is None:
        return None
    start = ctx.span(node)[0]
    return Edit(start + match.start(1), start + match.end(1), new)


def _uses_of_local(ctx: FileContext, local: str, qual: str) -> bool:
    return bool(ctx.loads_of(local, qual))


def _module_path_used(ctx: FileContext, module: str) -> bool:
    """Whether any attribute chain goes through ``module`` (e.g. ``jax.experimental.maps.xmap``)."""
    return any(isinstance(n, ast.Attribute) for n in ctx.references(module))


class TreeAliases(MovedName):
    """
    ## What it does
    Rewrites the `jax.tree_*` aliases (`jax.tree_map`, `tree_flatten`, `tree_leaves`,
    `tree_structure`, `tree_unflatten`, `tree_transpose`, `treedef_is_leaf`): a dotted use
    becomes `jax.tree.map(...)` and friends when the target JAX has the `jax.tree` module
    (0.4.25 and later, the default), else `jax.tree_util.tree_map(...)`; `from jax import
    tree_map` becomes `from jax.tree_util import tree_map` (importing `map` from `jax.tree` would
    shadow the builtin). `treedef_is_leaf` has no `jax.tree` form and goes to `jax.tree_util`.

    ## Why is this bad?
    The aliases were deprecated in JAX 0.4.26 and removed in 0.6.0. The replacements take the
    same arguments.
    """

    code = "JM601"
    name = "tree-aliases"
    summary = "`jax.tree_map` and the other `jax.tree_*` aliases → `jax.tree.*` / `jax.tree_util.*`"
    fix_safety = "safe"
    triggers = name_triggers([m.old for m in MOVES if m.family == "tree"])[0]
    # `jax.tree_util.tree_map` is current: the prefilter wants `jax.tree_map`, `from jax import tree_map`, ...
    requires = ()
    _spelled = ModuleAttributeSearch("jax", triggers)
    deprecated_in = "0.4.26"
    removed_in = "0.6.0"
    replacement_since = "0.4.25"
    family = "tree"

    @classmethod
    def wants(cls, data) -> bool:
        return super().wants(data) and cls._spelled(raw(data))
    examples = (
        Example(
            snippet("""
                import jax

                params = jax.tree_map(lambda x: x * 2, {"w": 1.0})
                leaves = jax.tree_leaves(params)
            """),
            snippet("""
                import jax

                params = jax.tree.map(lambda x: x * 2, {"w": 1.0})
                leaves = jax.tree.leaves(params)
            """),
        ),
        Example(
            snippet("""
                from jax import tree_map, tree_util

                doubled = tree_map(lambda x: x * 2, [1, 2])
                same = tree_util.tree_map(lambda x: x, doubled)
            """),
            snippet("""
                from jax.tree_util import tree_map
                from jax import tree_util

                doubled = tree_map(lambda x: x * 2, [1, 2])
                same = tree_util.tree_map(lambda x: x, doubled)
            """),
            title="imports keep the name; `jax.tree_util.tree_map` is already current",
        ),
    )
