"""JM301: the removed ``jax_array`` and ``jax_parallel_functions_output_gda`` options."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.folding import fold_true
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement, drop_argument
from jaxmigrate.catalog.gda import ATTRIBUTE_RENAMES
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.patterns.gda import GDA_MODULE, is_multi_process
from jaxmigrate.rules.base import Example, Rule, snippet

CONFIG = "jax.config"
JAX_ARRAY = "jax_array"
OUTPUT_GDA = "jax_parallel_functions_output_gda"
# attributes only a GlobalDeviceArray had (`.mesh` is common elsewhere: configs, meshes)
GDA_ONLY_ATTRIBUTES = tuple(a for a in ATTRIBUTE_RENAMES if a != "mesh")
OPTIONS = (JAX_ARRAY, OUTPUT_GDA)

_COMMENTS_CLOSING_BODY = snippet("""
    import jax

    def count(x):
        if jax.config.jax_array:
            n = len(x.addressable_shards)
            # the fold could not keep this comment
        else:
            n = 1
        return n
""")


class JaxArrayConfig(Rule):
    """
    ## What it does
    Deletes `jax.config.update("jax_array", True)` and
    `jax.config.update("jax_parallel_functions_output_gda", True)`; folds reads of
    `jax.config.jax_array` to `True` where the condition is simple (`if jax.config.jax_array:`
    keeps its body, `if not jax.config.jax_array:` keeps its `else`, `a if jax.config.jax_array
    else b` becomes `a`, `if a or (b and jax.config.jax_array):` becomes `if a or b:`); any
    other read (`use_array = jax.config.jax_array`, a condition it cannot fold) becomes `True`, the value it has had since
    0.4.7 (reported in a file that turns the option off); reports `update("jax_array", False)`
    and JAX's internal `jax_array(...)` context manager. `jax_array=True` goes from a test's
    `jtu.with_config(...)` (the decorator with it, when nothing else is left); another value there is reported. A read of
    `jax_parallel_functions_output_gda` becomes `False`, its default and what it says under
    jax.Array (pjit outputs are never GDAs; a GlobalDeviceArray branch it selected no longer runs),
    an unsafe fix in a file that turns the option on.

    A folded `if` whose kept branch is empty (`if not jax.config.jax_array: raise ...` with no
    `else`) is deleted with its lines, or becomes `pass` when it was the only statement of its
    block. Comments are kept as a person migrating by hand would keep them: the comment lines
    above the `if` and those of the kept branch stay; the comments inside the removed branch
    and on the removed `if`/`else` lines go with them (they describe the removed code). A kept
    body that ends in comment lines before its `else` is not folded, as the fold cannot keep them
    there: its read becomes `True`. The comments of a folded `a if ... else b` stay at the end of the
    kept expression's line.

    `update("jax_parallel_functions_output_gda", False)` is deleted only with `--unsafe-fixes`:
    it asked for host-local pjit outputs, which jax.Array no longer produces (see JM6xx rules for
    the host-local conversion).

    ## Why is this bad?
    Since JAX 0.4.7 jax.Array cannot be disabled, and in 0.4.14 both options were deleted:
    `jax.config.update("jax_array", True)` raises, and so does reading the flag. Code written
    for `jax_array=False` relied on the legacy mode and needs a person to look at it.
    """

    code = "JM301"
    name = "jax-array-config"
    summary = "removed `jax_array`/`jax_parallel_functions_output_gda` options: delete or fold to True"
    fix_safety = "safe"
    unsafe_note = ('deleting `update("jax_parallel_functions_output_gda", False)`: pjit returns global arrays, not each '
                   "process's host-local slice, to code that may read them as slices")
    # b"parallel_functions_output_gda": also JAX's internal option state, `parallel_functions_output_gda(True)`
    triggers = (b"jax_array", b"parallel_functions_output_gda")
    deprecated_in = "0.4.7"
    removed_in = "0.4.14"
    replacement_since = "0.4.7"
    history_names = ("jax.config.jax_array",)
    examples = (
        Example(
            snippet("""
                from jax._src import test_util as jtu

                @jtu.with_config(jax_array=True)
                class ArrayTest(jtu.JaxTestCase):
                    pass

                @jtu.with_config(jax_array=True, jax_enable_x64=True)
                class X64Test(jtu.JaxTestCase):
                    pass
            """),
            snippet("""
                from jax._src import test_util as jtu

                class ArrayTest(jtu.JaxTestCase):
                    pass

                @jtu.with_config(jax_enable_x64=True)
                class X64Test(jtu.JaxTestCase):
                    pass
            """),
            title="a test's `with_config(jax_array=True)`: the decorator goes when nothing else is left in it",
        ),
        Example(
            snippet("""
                import jax

                jax.config.update("jax_array", True)
                x = 1
            """),
            snippet("""
                import jax

                x = 1
            """),
        ),
        Example(
            snippet("""
                import jax

                def shards(x):
                    if jax.config.jax_array:
                        return x.addressable_shards
                    else:
                        return x.device_buffers
            """),
            snippet("""
                import jax

                def shards(x):
                    return x.addressable_shards
            """),
            title="a simple condition keeps the jax.Array branch",
        ),
        Example(
            snippet("""
                from jax.config import config

                config.update("jax_array", False)
            """),
            snippet("""
                from jax.config import config

                config.update("jax_array", False)
            """),
            flagged=True,
            title="code that turned jax.Array off needs a person",
        ),
        Example(_COMMENTS_CLOSING_BODY, _COMMENTS_CLOSING_BODY.replace("if jax.config.jax_array:", "if True:"),
                title="a kept body that ends in comments, which the fold cannot keep: the read becomes `True`"),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):  # the options are live there (JAX's own CI turned it off)
            yield from self._turned_off(ctx)
            return
        for call, _ in ctx.calls_to(f"{CONFIG}.update"):
            yield from self._update(ctx, call)
        for node in ctx.attributes(*OPTIONS):
            if ctx.qualname(node.value) == CONFIG:
                yield self._read(ctx, node)
        for call, _ in ctx.calls_to("jax._src.config.jax_array"):
            yield self.finding(ctx, call, "the `jax_array` option no longer exists: drop this context manager or "
                               "decorator and keep the jax.Array behaviour")
        for frm in ctx.nodes(ast.ImportFrom):
            if frm.module == "jax._src.config" and not frm.level:
                for alias in frm.names:
                    if alias.name in ("jax_array", "parallel_functions_output_gda"):
                        yield self.finding(ctx, alias, f"JAX's internal `{alias.name}` option state no longer exists: "
                                           "drop the import and the code that toggles it")
        for call, _ in ctx.calls_to("jax._src.test_util.with_config"):
            for kw in call.keywords:
                if kw.arg in OPTIONS:
                    fix = None
                    if isinstance(kw.value, ast.Constant) and kw.value.value is True:  # what jax.Array always is
                        fix = Fix("safe", edits=(_without_keyword(ctx, call, kw),))
                    yield self.finding(ctx, kw, f"the `{kw.arg}` option no longer exists: drop `{kw.arg}=` from "
                                       "`with_config` (jax.Array is always on)", fix)

    def _turned_off(self, ctx: FileContext) -> Iterator[Finding]:
        """For a target where the option is live: only the updates that turn jax.Array off, which the
        other GDA migrations (JM5xx) assume is on (the default since 0.4.1)."""
        for call, _ in ctx.calls_to(f"{CONFIG}.update"):
            if _option_update(call) == (JAX_ARRAY, False):
                yield self.finding(ctx, call, "this turns jax.Array off: the GDA migrations (JM5xx) write jax.Array "
                                   "code, which needs it on (the default since JAX 0.4.1; it cannot be turned off "
                                   "from 0.4.7): keep it off only until those are done")

    def _update(self, ctx: FileContext, call: ast.Call) -> Iterator[Finding]:
        update = _option_update(call)
        if update is None:
            return
        option, value = update
        parent = ctx.parent(call)
        removable = isinstance(parent, ast.Expr)
        stmt = cast(ast.stmt, parent)  # deleted only when removable: an ast.Expr
        drops = importer(ctx).root_import(call.func)
        if value is True and removable and option == OUTPUT_GDA and is_multi_process(ctx):
            yield self.finding(ctx, call, f"the `{option}` option was removed in JAX 0.4.14: delete this line together "
                               "with the host-local conversions of this module's pjit calls (which read it to keep pjit "
                               "outputs global)",
                               Fix("unsafe", edits=(delete_statement(ctx, stmt),), drop_unused_imports=drops, last=True))
        elif value is True and removable:
            yield self.finding(ctx, call, f"the `{option}` option was removed in JAX 0.4.14; it is always on: delete "
                               "this line", Fix("safe", edits=(delete_statement(ctx, stmt),), drop_unused_imports=drops))
        elif option == OUTPUT_GDA and value is False and removable:
            yield self.finding(ctx, call, f"the `{option}` option was removed in JAX 0.4.14; pjit outputs are now "
                               "global jax.Arrays, not host-local: delete this line and convert outputs with "
                               "`multihost_utils.global_array_to_host_local_array` where host-local data is needed",
                               Fix("unsafe", edits=(delete_statement(ctx, stmt),), drop_unused_imports=drops))
        elif option == JAX_ARRAY and value is False:
            yield self.finding(ctx, call, "`jax_array` cannot be turned off since JAX 0.4.7: this code relied on the "
                               "legacy GDA/DeviceArray mode and needs a manual migration to jax.Array")
        else:
            yield self.finding(ctx, call, f"the `{option}` option was removed in JAX 0.4.14: remove this update")

    def _read(self, ctx: FileContext, node: ast.Attribute) -> Finding:
        if node.attr == JAX_ARRAY:
            folded = fold_true(ctx, node)
            if folded is not None:
                statement_edits, edits = folded
                return self.finding(ctx, node, "`jax_array` is always true since JAX 0.4.7 and the flag was removed in "
                                    "0.4.14: keep the jax.Array branch",
                                    Fix("safe", edits=edits, statement_edits=statement_edits,
                                        drop_unused_imports=importer(ctx).root_import(node)))
            if any(_option_update(c) == (JAX_ARRAY, False) for c in ctx.nodes(ast.Call)):
                return self.finding(ctx, node, "`jax_array` is always true since JAX 0.4.7 and the flag was removed in "
                                    "0.4.14, but this file turns it off: migrate that code, then read `True`",
                                    suggestion="True")
            # a read kept in a variable or passed on (`use_array = jax.config.jax_array`), or in a
            # condition the fold could not simplify: the value it has had since 0.4.7, where the flag
            # itself is gone (the condition is a person's to simplify)
            simplify = " (and simplify the condition)" if _in_condition(ctx, node) else ""
            return self.finding(ctx, node, "`jax_array` is always true since JAX 0.4.7 and the flag was removed in "
                                f"0.4.14: read `True` instead{simplify}",
                                Fix("safe", edits=(ctx.replace(node, "True"),),
                                    drop_unused_imports=importer(ctx).root_import(node)), replacement="True")
        # its default, and what it says under jax.Array: pjit outputs are never GDAs
        turned_on = any(_option_update(c) == (OUTPUT_GDA, True) for c in ctx.nodes(ast.Call))
        branch = _gda_branch(ctx, node)
        dead = f" (the GlobalDeviceArray branch on line {branch.lineno} no longer runs)" if branch is not None else ""
        return self.finding(ctx, node, f"the `{node.attr}` option was removed in JAX 0.4.14: pjit outputs are "
                            f"jax.Arrays, never GDAs: read `False`{dead}",
                            Fix("unsafe" if turned_on else "safe", edits=(ctx.replace(node, "False"),),
                                drop_unused_imports=importer(ctx).root_import(node)), replacement="False")


def _in_condition(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` is (part of) the test of an ``if``, a conditional expression or a loop."""
    child, parent = node, ctx.parent(node)
    while isinstance(parent, (ast.UnaryOp, ast.BoolOp)):
        child, parent = parent, ctx.parent(parent)
    return isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is child


def _option_update(call: ast.Call) -> Optional[Tuple[str, object]]:
    """(option, value) of ``jax.config.update("jax_array", value)`` and the like (value None when
    it is not a constant); None for other options or forms."""
    if len(call.args) != 2 or not isinstance(call.args[0], ast.Constant) or call.args[0].value not in OPTIONS:
        return None
    return call.args[0].value, call.args[1].value if isinstance(call.args[1], ast.Constant) else None


def _gda_branch(ctx: FileContext, read: ast.AST) -> Optional[ast.expr]:
    """The first GlobalDeviceArray use (a name of its module, a GDA-only attribute) in the branch
    of an ``if`` that a true ``read`` selects, or None."""
    node: Optional[ast.AST] = read
    while node is not None and not isinstance(node, (ast.If, ast.IfExp, ast.stmt)):
        node = ctx.parent(node)
    if not isinstance(node, (ast.If, ast.IfExp)):
        return None
    body = node.body if isinstance(node.body, list) else [node.body]
    for part in body:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Attribute) and sub.attr in GDA_ONLY_ATTRIBUTES:
                return sub
            if isinstance(sub, (ast.Name, ast.Attribute)) and (ctx.qualname(sub) or "").startswith(GDA_MODULE):
                return sub
    return None


def _without_keyword(ctx: FileContext, call: ast.Call, kw: ast.keyword) -> Edit:
    """The edit that drops ``kw`` from ``call``; a decorator left with no argument goes with its line."""
    parent = ctx.parent(call)
    alone = len(call.keywords) == 1 and not call.args
    if alone and isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and call in parent.decorator_list:
        start, end = ctx.span(call)
        first, _ = ctx.line_col(start)
        last, _ = ctx.line_col(end)
        if ctx.line_text(first)[:start - ctx.line_start(first)].strip() == "@" and not trailing_code(ctx, end, last):
            return Edit(ctx.line_start(first), ctx.line_start(last) + len(ctx.line_text(last)), "")
    return drop_argument(ctx, call, kw)


def trailing_code(ctx: FileContext, end: int, line: int) -> bool:
    """Whether code (not a comment) follows offset ``end`` on its line."""
    rest = ctx.source[end:ctx.line_start(line) + len(ctx.line_text(line))].strip()
    return bool(rest) and not rest.startswith("#")
