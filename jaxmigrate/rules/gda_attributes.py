"""JM502: GlobalDeviceArray attributes, type references and module names → their jax.Array spellings."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import partial
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.folding import keep_orelse
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.analysis.values import InstanceFacts, defines_attribute, rejects_when_true, type_comparison, type_position
from jaxmigrate.catalog.api_history import exists
from jaxmigrate.catalog.array_classes import DISTINGUISH, DISTINGUISH_NEEDS, GAINS, TRACERS
from jaxmigrate.catalog.gda import ADVICE, ATTRIBUTE_RENAMES, GDA_ONLY, MEMBER_MOVES, PRIVATE_REPORTED
from jaxmigrate.core.findings import Edit, Finding, Fix, FixSafety, ImportRef, StatementEdit
from jaxmigrate.patterns.array_tests import array_test, describe
from jaxmigrate.patterns.gda import (
    GDA,
    GDA_MODULE,
    GDA_VALUES,
    NAMED_SHARDING,
    gda_string_annotations,
    named_like_gda,
    names_gda,
    rewritable_construction,
    same_answer_with_array,
)
from jaxmigrate.patterns.gda_checks import GdaBranch, gda_branch, gda_member_references, gda_module_imports
from jaxmigrate.patterns.gda_makers import GDA_MAKERS
from jaxmigrate.patterns.pjit_outputs import GDA_OUTPUT_OPTION, pjit_output, returns_gdas
from jaxmigrate.rules.base import Example, Rule, short, snippet

ARRAY = "jax.Array"
SHARD = "jax.Shard"
TRACER = TRACERS[0]  # jax.core.Tracer
MESH_ATTRIBUTES = ("mesh", "mesh_axes", "_global_mesh", "_mesh_axes")  # renamed to a NamedSharding's
SHARD_SINCE = "0.4.5"  # first JAX with `jax.Shard` (jax.Array itself is there since 0.4.1)

CLASS_METHODS = ("from_callback", "from_batched_callback", "from_batched_callback_with_devices")



@dataclass
class _Rewrite:
    """One rewrite of a reference to the module; attribute renames that depend on it (the
    annotation or isinstance that says a receiver is a GDA) ride in the same fix."""

    node: ast.AST
    message: str
    text: str
    safety: FixSafety
    imports: Tuple[ImportRef, ...] = ()
    drops: Tuple[ImportRef, ...] = ()
    dependents: List[Tuple[ast.AST, str, Edit]] = field(default_factory=list)
    branch: Optional[GdaBranch] = None  # the check is a branch's test: deleted, or narrowed (see ``_fix``)


class GdaAttributes(Rule):
    """
    ## What it does
    Rewrites what is left of `GlobalDeviceArray` once its constructors are gone (JM501 rewrites
    those), to the jax.Array spelling:

    - on a receiver known to be a GDA: `x.local_shards` → `x.addressable_shards`,
      `x.local_data(i)` → `x.addressable_data(i)`, `x.mesh_axes` → `x.sharding.spec` and
      `x.mesh` → `x.sharding.mesh`. A receiver is known to be a GDA when it is a name bound once
      in its scope to a GDA constructor (or to `jax.make_array_from_callback` /
      `make_array_from_single_device_arrays`, what JM501 makes of them), a parameter, variable
      or class field (`self.x`) annotated `GlobalDeviceArray` (also `Optional[...]`), or a name
      narrowed by `if isinstance(x, GlobalDeviceArray):` (also `while`, `and`, `... if ... else`),
      `assert isinstance(...)`, `self.assertIsInstance(...)` or
      `if not isinstance(...): raise`, or a name bound to what a helper returns: a function of
      the module, or of another module of the tree given to `check`/`fix` that this one imports
      (`from model import make_params`), whose return annotation is `GlobalDeviceArray` or whose
      every `return` builds one. What a pjitted function returns is a GDA too where GDA outputs
      were on: the module turns `jax_parallel_functions_output_gda` on
      (`jax.config.update(...)`, as the GDA docs told), or the call runs inside
      `with parallel_functions_output_gda(True):` or a function or class decorated with it (or
      `jtu.with_config(jax_parallel_functions_output_gda=True)`): `out = f(x)`,
      `out, aux = f(x)` or `pjit(g, ...)(x).local_data(0)`, `f` bound once to `pjit(...)` or
      decorated `@partial(pjit, ...)`. Elsewhere a pjit output was a GDA only if the option was
      on where the program ran, so its GDA attributes are reported with what to write. An
      annotation or isinstance check that is the evidence is rewritten in the same fix as the
      attributes it vouches for, so no rename is left behind once it says `jax.Array`.
    - `local_shards` and `local_data(...)` on any other receiver are reported (only a GDA had
      them); `.mesh` and `.mesh_axes` elsewhere are left alone, since configs, meshes and
      checkpoint arguments have them too, unless the receiver is named like a GDA (`gda`,
      `out_gda`, `gda1`): then they are reported.
    - every other reference to the class (`isinstance(x, GlobalDeviceArray)`, also in a tuple,
      annotations such as `Callable[[], GlobalDeviceArray]`, `gda_lib.GlobalDeviceArray`) →
      `jax.Array`; `MeshAxes` (an alias of PartitionSpec) → `jax.sharding.PartitionSpec`; `Shard`
      → `jax.Shard` (a `Shard(...)` call is reported: the constructors differ). A use that is
      neither a type check nor an annotation (a registry key, an alias) is an unsafe fix whose
      message says what changes: arrays are instances of `jax.Array` but their type is not
      `jax.Array` itself (a lookup by `type(x)` misses every array, one by isinstance takes
      tracers too), so `type(x) is GlobalDeviceArray` is reported with `isinstance`.
    - an `isinstance`/`issubclass` check is an unsafe fix (with the attributes it vouches for):
      every array is a jax.Array now, so `isinstance(x, jax.Array)` is also true for the arrays
      that were not GDAs and for tracers, and the branch it guards now runs for them too (the
      message says where they went before: the `else`, the code after it). It stays safe where
      the answer cannot change for a program that got past it: a check that only guards a
      failure (`assert isinstance(x, GlobalDeviceArray)`, `self.assertIsInstance(...)`,
      `if not isinstance(...): raise ...`: it stops failing for other arrays, nothing else), or
      one whose tuple also names `jax.Array` or `jnp.ndarray` (a guard whose tuple names other
      classes, `(np.ndarray, GlobalDeviceArray)`, turned tracers away: a tracer is a jax.Array
      now, so it is unsafe). A check that turned GDAs away
      (`if isinstance(x, GlobalDeviceArray): raise ...`, also `and` another condition) is
      reported: with `jax.Array` it would raise for every array. A check that told GDAs from
      other arrays or tracers, a chain (`if`/`elif`, or consecutive `if ...: return` statements)
      with another test of the same value for arrays or tracers (`isinstance(x, Tracer)`,
      `jnp.DeviceArray`, `ArrayImpl`), is reported with the test to write,
      `isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and not x.is_fully_addressable`
      (the migration guide's GDA, an array that spans processes), and the `.mesh`/`.mesh_axes`
      it vouches for are reported with it.
    - a branch `if isinstance(x, GlobalDeviceArray):` followed by one that takes jax.Arrays
      (`elif isinstance(x, jax.Array)`, or `if hasattr(x, "sharding")` after a branch that
      returns) only ran for GDAs: rewritten it would take every array and shadow that branch, so
      the unsafe fix deletes it, as upstream migrations did (an `elif` one is reported). A GDA
      branch with no such sibling that reads `.mesh`/`.mesh_axes` narrows its test to
      `isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and
      isinstance(x.sharding, NamedSharding)`: those renames hold for a NamedSharding only, and
      `.sharding` raises on a tracer.
    - the module's helpers (`get_shard_indices`, `get_shard_shape`, `_get_sharding_spec`, ...) and
      string annotations are reported with what to write.
    - an import of `jax.experimental.global_device_array` that nothing uses is removed; one that
      is still used by something no fix rewrites is reported.

    ## Why is this bad?
    `jax.experimental.global_device_array` was removed in JAX 0.4.7: importing it fails, and the
    jax.Array that replaces GlobalDeviceArray has no `local_shards`, `local_data`, `mesh_axes` or
    `mesh` (`x.mesh` raises AttributeError). The layout lives in `x.sharding`, a NamedSharding
    for arrays made by JM501's rewrite; the shard accessors have the same meaning under their
    `addressable_` names.
    """

    code = "JM502"
    project_facts = (GDA_MAKERS,)
    name = "gda-attributes"
    summary = "GlobalDeviceArray attributes and type references → jax.Array (`local_shards`, `mesh_axes`, ...)"
    fix_safety = "safe"
    unsafe_note = ("every array is a jax.Array: a check for one is also true for arrays that were not GDAs, and where "
                   "the fix deletes a branch that only ran for GDAs, what a sharded array gets there is the next "
                   "branch's")
    # b"gda": a receiver named like a GDA is reported even once nothing else of the module is left
    # (and `jax_parallel_functions_output_gda`); b"mesh_axes", b"FROM_GDA": a pjit output's attributes
    triggers = (b"GlobalDeviceArray", b"global_device_array", b"local_shards", b"local_data", b"MeshAxes", b"gda",
                b"mesh_axes", b"FROM_GDA")
    deprecated_in = "0.4.1"
    removed_in = "0.4.7"
    replacement_since = "0.4.1"
    history_names = ("jax.experimental.global_device_array.GlobalDeviceArray",)
    examples = (
        Example(
            snippet("""
                import jax
                from jax.experimental.global_device_array import GlobalDeviceArray

                def describe(arr: GlobalDeviceArray):
                    shards = [s.data for s in arr.local_shards]
                    return arr.mesh.shape, arr.mesh_axes, arr.local_data(0), shards
            """),
            snippet("""
                import jax

                def describe(arr: jax.Array):
                    shards = [s.data for s in arr.addressable_shards]
                    return arr.sharding.mesh.shape, arr.sharding.spec, arr.addressable_data(0), shards
            """),
            title="a parameter annotated as a GDA",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import pjit

                jax.config.update("jax_parallel_functions_output_gda", True)
                double = pjit(lambda a: a * 2, in_axis_resources=None, out_axis_resources=None)

                def layout(x):
                    out = double(x)
                    return out.mesh_axes, out.local_data(0)
            """),
            snippet("""
                import jax
                from jax.experimental.pjit import pjit

                jax.config.update("jax_parallel_functions_output_gda", True)
                double = pjit(lambda a: a * 2, in_axis_resources=None, out_axis_resources=None)

                def layout(x):
                    out = double(x)
                    return out.sharding.spec, out.addressable_data(0)
            """),
            title="what a pjitted function returned with GDA outputs on",
        ),
        Example(
            snippet("""
                import jax
                import jax.experimental.global_device_array as gda_lib
                import numpy as np

                def to_host(x):
                    if isinstance(x, gda_lib.GlobalDeviceArray):
                        return [np.asarray(s.data) for s in x.local_shards]
                    return [np.asarray(x)]
            """),
            snippet("""
                import jax
                import numpy as np

                def to_host(x):
                    if isinstance(x, jax.Array):
                        return [np.asarray(s.data) for s in x.addressable_shards]
                    return [np.asarray(x)]
            """),
            unsafe=True,
            title="an isinstance check, and a name narrowed by one (every array is a jax.Array now: unsafe)",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.global_device_array import GlobalDeviceArray

                def to_host(x):
                    if isinstance(x, GlobalDeviceArray):
                        raise ValueError("GDAs cannot be broadcast")
                    return jax.device_get(x)
            """),
            snippet("""
                import jax
                from jax.experimental.global_device_array import GlobalDeviceArray

                def to_host(x):
                    if isinstance(x, GlobalDeviceArray):
                        raise ValueError("GDAs cannot be broadcast")
                    return jax.device_get(x)
            """),
            flagged=True,
            title="a check that turned GDAs away is reported: with `jax.Array` it would turn away every array",
        ),
        Example(
            snippet("""
                import numpy as np
                from jax.core import Tracer
                from jax.experimental.global_device_array import GlobalDeviceArray

                def host_value(x):
                    if isinstance(x, Tracer):
                        return None
                    if isinstance(x, GlobalDeviceArray):
                        return np.asarray(x.addressable_data(0))
                    return np.asarray(x)
            """),
            snippet("""
                import numpy as np
                from jax.core import Tracer
                from jax.experimental.global_device_array import GlobalDeviceArray

                def host_value(x):
                    if isinstance(x, Tracer):
                        return None
                    if isinstance(x, GlobalDeviceArray):
                        return np.asarray(x.addressable_data(0))
                    return np.asarray(x)
            """),
            flagged=True,
            title="a check that told GDAs from tracers or other arrays is reported with the test to write",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.global_device_array import GlobalDeviceArray

                def layout(x):
                    assert isinstance(x, GlobalDeviceArray)
                    return x.mesh_axes
            """),
            snippet("""
                import jax

                def layout(x):
                    assert isinstance(x, jax.Array)
                    return x.sharding.spec
            """),
            title="a check that only guards a failure stays safe",
        ),
        Example(
            snippet("""
                from jax.experimental.global_device_array import MeshAxes
                from jax.sharding import PartitionSpec as P

                def replicated(ndim: int) -> MeshAxes:
                    return P(*([None] * ndim))
            """),
            snippet("""
                from jax.sharding import PartitionSpec as P

                def replicated(ndim: int) -> P:
                    return P(*([None] * ndim))
            """),
            title="`MeshAxes` was PartitionSpec",
        ),
        Example(
            snippet("""
                class Partitioner:
                    def __init__(self, mesh, mesh_axes):
                        self.mesh, self.mesh_axes = mesh, mesh_axes

                    def local_data(self, index):
                        return index

                def restore_args(config, partitioner, pspec, type_handlers):
                    args = type_handlers.ArrayRestoreArgs(mesh=partitioner.mesh, mesh_axes=pspec)
                    return args, config.mesh_axes, partitioner.local_data(0)
            """),
            title="`.mesh`, `.mesh_axes` and a project's own `local_data`",
        ),
        Example(
            snippet("""
                def first_shard(batch):
                    return batch.local_shards[0].data
            """),
            snippet("""
                def first_shard(batch):
                    return batch.local_shards[0].data
            """),
            flagged=True,
            title="`local_shards` on a receiver not known to be a GDA",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        return _Checker(self, ctx).run()


class _Checker:
    """The analysis of one file: every reference to the module, every GDA attribute, imports."""

    def __init__(self, rule: GdaAttributes, ctx: FileContext) -> None:
        self.rule = rule
        self.ctx = ctx
        self.rewrites: Dict[int, _Rewrite] = {}  # id(reference node) → its rewrite
        self.fixed: Dict[int, bool] = {}  # id(member reference) → a safe fix (here or JM501) removes it
        self.told_apart: set = set()  # id(class reference) of the checks reported for telling GDAs apart
        self.findings: List[Finding] = []
        # what a pjitted function returns where GDA outputs were on is a GDA (patterns/pjit_outputs.py)
        self.values = InstanceFacts(ctx, GDA, GDA_VALUES, partial(names_gda, ctx), partial(returns_gdas, ctx))
        # (no cycle through self: the runner pauses the cyclic collector, and a cycle would keep
        # every file's tree alive)

    def run(self) -> Iterator[Finding]:
        for node, member in gda_member_references(self.ctx):
            self._member(node, member)
        for node in self.ctx.attributes(*ATTRIBUTE_RENAMES, *PRIVATE_REPORTED):
            if isinstance(node.ctx, ast.Load):
                self._attribute(node)
        for rw in self.rewrites.values():
            fix = self._fix(rw)
            self.findings.append(self.rule.finding(self.ctx, rw.node, rw.message, fix))
            for dependent, message, _ in rw.dependents:
                self.findings.append(self.rule.finding(self.ctx, dependent, message, fix))
        for node in gda_string_annotations(self.ctx):
            self._report(node, "this string annotation names GlobalDeviceArray, removed in JAX 0.4.7",
                         str(node.value).replace("GlobalDeviceArray", "jax.Array"))
        self._imports()
        return iter(self.findings)

    def _fix(self, rw: _Rewrite) -> Optional[Fix]:
        """The rewrite with the attribute renames that depend on it. A GDA branch that a later one
        for jax.Array shadows is deleted (the renames inside it go with it); one whose renames
        read the mesh of a NamedSharding narrows its test to arrays that have one, unless it has
        an `else`/`elif`, which may be where jax.Arrays go now (reported)."""
        ctx, branch = self.ctx, rw.branch
        if branch is not None and branch.handled_by is not None:
            if branch.stmt.orelse:  # the `elif` becomes the `if`
                line, col = ctx.line_col(ctx.span(branch.stmt)[0])
                return Fix(rw.safety, statement_edits=(StatementEdit(line, col, keep_orelse),), drop_unused_imports=rw.drops)
            return Fix(rw.safety, edits=(delete_statement(ctx, branch.stmt),), drop_unused_imports=rw.drops)
        edits = [ctx.replace(rw.node, rw.text)]
        imports = rw.imports
        meshy = any(isinstance(d, ast.Attribute) and d.attr in MESH_ATTRIBUTES for d, _, _ in rw.dependents)
        if branch is not None and meshy and branch.stmt.orelse:
            rw.message += ("; the branch after it may be the one that takes jax.Arrays now (every array is one): "
                           "decide which branch an array takes, then rewrite or delete this one by hand")
            return None
        if branch is not None and meshy and isinstance(branch.subject, ast.Name):
            named, more = importer(ctx).reference(NAMED_SHARDING, at=branch.call)
            subject = branch.subject.id
            # a tracer is a jax.Array now, and `.sharding` raises on one under jit: turned away first
            not_tracer = ""
            if exists(TRACER, ctx.target):
                tracer, more_imports = importer(ctx).reference(TRACER, at=branch.call, dotted=True)
                not_tracer, more = f" and not isinstance({subject}, {tracer})", more + more_imports
            edits = [ctx.replace(branch.call, f"isinstance({subject}, {rw.text}){not_tracer} and "
                                              f"isinstance({subject}.sharding, {named})")]
            imports += more
            rw.message += ("; the test narrows to arrays with a `NamedSharding`, the ones with the `.sharding.mesh`/"
                           "`.sharding.spec` this branch reads" + (", and no tracer (`.sharding` raises on one)"
                                                                   if not_tracer else ""))
        edits += [edit for _, _, edit in rw.dependents]
        return Fix(rw.safety, edits=tuple(edits), add_imports=imports, drop_unused_imports=rw.drops)

    # references to the module's names --------------------------------------------------
    def _member(self, node: ast.expr, member: str) -> None:
        ctx = self.ctx
        parent = ctx.parent(node)
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        if member == "GlobalDeviceArray":
            self._class_reference(node, parent, call)
        elif member in MEMBER_MOVES:
            text, imports = importer(ctx).reference(MEMBER_MOVES[member], at=node)
            self._rewrite(node, f"`{member}` was removed with `{GDA_MODULE}` in JAX 0.4.7: it was "
                          f"`{MEMBER_MOVES[member]}`", text, "safe", imports)
        elif member == "Shard" and call is None and ctx.target_at_least(SHARD_SINCE):
            text, imports = importer(ctx).reference(SHARD, at=node)
            self._rewrite(node, f"`Shard` was removed with `{GDA_MODULE}` in JAX 0.4.7: jax.Array's shards "
                          f"are `{SHARD}`", text, "safe", imports)
        elif member == "Shard":
            if call is not None:
                why = ("`jax.Shard` is built from (device, sharding, global_shape, data), not (device, index, "
                       "replica_id, data)")
                advice: Optional[str] = ADVICE["Shard"]
            else:
                why = f"`{SHARD}` exists from JAX {SHARD_SINCE}; before, jax.Array's shards are `jax._src.array.Shard`"
                advice = "jax._src.array.Shard"
            self._report(node, f"`Shard` was removed with `{GDA_MODULE}` in JAX 0.4.7: {why}", advice)
        else:
            advice = ADVICE.get(member)
            message = f"`{GDA_MODULE}.{member}` was removed in JAX 0.4.7"
            if advice is None:
                message += " and has no jax.Array counterpart"
            self._report(node, message, advice)

    def _class_reference(self, node: ast.expr, parent: Optional[ast.AST], call: Optional[ast.Call]) -> None:
        ctx = self.ctx
        if call is not None:  # GlobalDeviceArray(...): JM501
            self.fixed[id(node)] = _jm501_fixes(ctx, call, GDA)
            return
        if isinstance(parent, ast.Attribute) and parent.value is node:
            grand = ctx.parent(parent)
            if parent.attr in CLASS_METHODS and isinstance(grand, ast.Call) and grand.func is parent:
                self.fixed[id(node)] = _jm501_fixes(ctx, grand, f"{GDA}.{parent.attr}")  # JM501
                return
            target = "jax.make_array_from_callback" if parent.attr in CLASS_METHODS else "jax.Array"
            self._report(parent, f"`GlobalDeviceArray.{parent.attr}` was removed in JAX 0.4.7", f"use `{target}`")
            return
        array, imports = importer(ctx).reference(ARRAY, at=node)
        subject = type_comparison(ctx, node)
        if subject is not None:
            self._report(node, "`GlobalDeviceArray` was removed in JAX 0.4.7; the type of an array is never "
                         "`jax.Array` itself (it is an abstract base class)", f"isinstance({subject}, {ARRAY})")
            return
        kind = type_position(ctx, node)
        changes = kind == "check" and not same_answer_with_array(ctx, node)
        if changes and rejects_when_true(ctx, node):
            self._report(node, "`GlobalDeviceArray` was removed in JAX 0.4.7, and every array is a jax.Array now: "
                         "this check turned GDAs away, and with `jax.Array` it would turn away every array; "
                         "no array is a GDA any more", "delete the check, or test for what the code cannot handle")
            return
        branch = gda_branch(ctx, node) if kind == "check" else None
        test = array_test(ctx, node) if changes else None
        if test is not None and test.sibling is not None and (branch is None or branch.handled_by is None):
            self._report(node, "`GlobalDeviceArray` was removed in JAX 0.4.7, and every array is a jax.Array now: "
                         f"this test told GDAs from what {describe(ctx, test.sibling)} takes, and with `jax.Array` "
                         f"it would also take {GAINS[GDA]}; test what made an array a GDA (the migration guide: an "
                         "array that spans processes)", self._distinguishing(test.subject))
            self.told_apart.add(id(node))
            return
        if branch is not None and branch.handled_by is not None:
            handled = f"`{short(ctx.text(branch.handled_by))}` at line {branch.handled_by.lineno}"
            message = ("`GlobalDeviceArray` was removed in JAX 0.4.7: this branch only ran for GDAs, and with jax.Array "
                       f"every array takes the one for {handled}")
            if branch.is_elif:
                self._report(node, f"{message}: delete this `elif` branch", None)
                return
            self._rewrite(node, f"{message}; the branch goes (as upstream migrations removed it)", array, "unsafe",
                          imports, branch)
            return
        message = "`GlobalDeviceArray` was removed in JAX 0.4.7: jax.Array replaced it"
        safety: FixSafety = "safe"
        if kind is None:
            message += (" (this use is not a type check or an annotation, and no array's type is `jax.Array` itself, "
                        "an abstract base class: a lookup by `type(x)` misses every array, one by isinstance also "
                        f"takes {GAINS[GDA]})")
            safety = "unsafe"
        elif changes:
            went = f"; they went to {test.other_path} before" if test is not None and test.other_path else ""
            message += f", but every array is a jax.Array now: this check is also true for {GAINS[GDA]}{went}"
            safety = "unsafe"
        self._rewrite(node, message, array, safety, imports, branch)

    def _distinguishing(self, subject: ast.expr) -> Optional[str]:
        """The test that tells an array like a GDA apart (``catalog/array_classes.py``), where the target has its names."""
        if not all(exists(name, self.ctx.target) for name in DISTINGUISH_NEEDS):
            return None
        return DISTINGUISH[GDA].format(self.ctx.text(subject))

    def _rewrite(self, node: ast.expr, message: str, text: str, safety: FixSafety, imports,
                 branch: Optional[GdaBranch] = None) -> None:
        drops = importer(self.ctx).root_import(node)
        self.rewrites[id(node)] = _Rewrite(node, message, text, safety, imports, drops, branch=branch)
        self.fixed[id(node)] = safety == "safe"

    def _report(self, node: ast.AST, message: str, suggestion: Optional[str]) -> None:
        self.findings.append(self.rule.finding(self.ctx, node, message, suggestion=suggestion))

    # GDA attributes --------------------------------------------------------------------
    def _attribute(self, node: ast.Attribute) -> None:
        ctx = self.ctx
        receiver = node.value
        if ctx.qualname(receiver) is not None:  # a module or an imported object: `maps.mesh`
            return
        attr = node.attr
        parent = ctx.parent(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        shown = f"{short(ctx.text(receiver))}.{attr}"
        known, evidence = self.values.receiver(receiver)
        if known == "string":  # annotated as a GDA in a string: reported like a GDA-named receiver
            known, gda_named = False, True
        else:
            gda_named = named_like_gda(receiver)
        if known and attr in MESH_ATTRIBUTES and id(evidence) in self.told_apart:
            self._report(node, f"`{shown}`: GlobalDeviceArray was removed in JAX 0.4.7; a jax.Array with a "
                         f"NamedSharding has `.{ATTRIBUTE_RENAMES[attr]}`: rewrite it with the test that vouches "
                         "for it", f"{ctx.text(receiver)}.{ATTRIBUTE_RENAMES[attr]}")
            return
        if known and attr in ATTRIBUTE_RENAMES:
            end = ctx.span(node)[1]
            start = end - len(attr)
            if ctx.source[start:end] == attr:
                edit = Edit(start, end, ATTRIBUTE_RENAMES[attr])
                message = f"`{shown}`: GlobalDeviceArray was removed in JAX 0.4.7; a jax.Array has `.{ATTRIBUTE_RENAMES[attr]}`"
                if evidence is None and pjit_output(ctx, receiver) is not None:
                    message += f" (a pjitted function returned it, a GDA with `{GDA_OUTPUT_OPTION}` on)"
                rw = self.rewrites.get(id(evidence)) if evidence is not None else None
                if rw is not None:
                    rw.dependents.append((node, message, edit))
                else:
                    self.findings.append(self.rule.finding(ctx, node, message, Fix("safe", edits=(edit,))))
                return
        if known and attr in PRIVATE_REPORTED:
            self._report(node, f"`{shown}` is private GlobalDeviceArray state, gone with it in JAX 0.4.7",
                         PRIVATE_REPORTED[attr].format(x=ctx.text(receiver)))
            return
        if attr not in ATTRIBUTE_RENAMES or (attr == "local_data" and not called):
            return
        if not known and pjit_output(ctx, receiver) is not None:
            self._report(node, f"`{shown}`: a pjitted function returned `{short(ctx.text(receiver))}`: a "
                         f"GlobalDeviceArray (removed in JAX 0.4.7) where `{GDA_OUTPUT_OPTION}` was on (no other "
                         f"array had `.{attr}`), a jax.Array now, which has `.{ATTRIBUTE_RENAMES[attr]}`",
                         f"{ctx.text(receiver)}.{ATTRIBUTE_RENAMES[attr]}")
            return
        if attr in GDA_ONLY and not (defines_attribute(self.ctx, attr) and not gda_named):
            self._report(node, f"`.{attr}` only existed on GlobalDeviceArray (removed in JAX 0.4.7); on a jax.Array "
                         f"it is `.{ATTRIBUTE_RENAMES[attr]}`", f"{ctx.text(receiver)}.{ATTRIBUTE_RENAMES[attr]}")
        elif gda_named and attr in ("mesh", "mesh_axes"):
            self._report(node, f"`{shown}` looks like a GlobalDeviceArray (removed in JAX 0.4.7): a jax.Array has no "
                         f"`.{attr}`", f"{ctx.text(receiver)}.{ATTRIBUTE_RENAMES[attr]}")

    # imports -----------------------------------------------------------------------------
    def _imports(self) -> None:
        ctx = self.ctx
        unused: Dict[int, Tuple[ast.ImportFrom, List[ast.alias]]] = {}
        for imp in gda_module_imports(ctx):
            if imp.star:
                self._report(imp.alias, f"`{GDA_MODULE}` was removed in JAX 0.4.7: this import fails", None)
            elif imp.uses and imp.is_module:
                self._still_used(imp.alias, imp.what, [u for u in imp.uses if not self._module_use_fixed(u)])
            elif imp.uses:
                self._still_used(imp.alias, imp.what, [u for u in imp.uses if not self.fixed.get(id(u), False)])
            elif isinstance(imp.stmt, ast.Import):  # as for `jax.experimental.maps` (keeps `import jax` when needed)
                self.findings.append(self.rule.dropped_import(ctx, imp.stmt, imp.alias))
            else:
                unused.setdefault(id(imp.stmt), (imp.stmt, []))[1].append(imp.alias)
        for stmt, aliases in unused.values():
            self.findings.append(self._drop_aliases(stmt, aliases))

    def _module_use_fixed(self, use: ast.expr) -> bool:
        """Whether a use of the module itself (``gda_lib`` in ``gda_lib.X``) goes away with a fix."""
        parent = self.ctx.parent(use)
        return isinstance(parent, ast.Attribute) and parent.value is use and self.fixed.get(id(parent), False)

    def _still_used(self, alias: ast.alias, what: str, left: Sequence[ast.expr]) -> None:
        if not left:
            return  # every use is rewritten; the fixes drop the import once it is unused
        lines = sorted({u.lineno for u in left})
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        if all(self._unsafe_fix_pending(u) for u in left):
            then = "which only unsafe fixes rewrite (`--unsafe-fixes`); the import goes with them"
        else:
            then = "left for a manual migration"
        self._report(alias, f"`{GDA_MODULE}` was removed in JAX 0.4.7: this import of `{what}` fails on current "
                     f"JAX; still used on {where}, {then}", None)

    def _unsafe_fix_pending(self, use: ast.expr) -> bool:
        """Whether an unsafe fix of this rule rewrites the use (or, for a module, ``module.X``)."""
        parent = self.ctx.parent(use)
        node = parent if isinstance(parent, ast.Attribute) and parent.value is use else use
        return id(node) in self.rewrites or id(use) in self.rewrites

    def _drop_aliases(self, stmt: ast.ImportFrom, unused: List[ast.alias]) -> Finding:
        ctx = self.ctx
        edit = importer(ctx).drop(stmt, unused)
        assert edit is not None  # ``unused`` is never empty
        names = ", ".join(f"`{a.name}`" for a in unused)
        return self.rule.finding(ctx, unused[0], f"{names} from `{stmt.module}`: the module was removed in JAX 0.4.7 "
                                 "and nothing here uses it any more", Fix("safe", edits=(edit,)))


# helpers -------------------------------------------------------------------------------
def _jm501_fixes(ctx: FileContext, call: ast.Call, kind: str) -> bool:
    """Whether JM501 rewrites this constructor call (with a safe fix)."""
    return rewritable_construction(call, kind) is not None


