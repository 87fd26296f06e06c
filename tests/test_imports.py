"""Dropping names from import statements and moving them to new ones keeps the comments on the
names' lines with the names (analysis/imports.py, analysis/import_text.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxmigrate.analysis.import_text import alias_comments, render_import_from
from jaxmigrate.analysis.imports import fix_imports
from jaxmigrate.core.findings import ImportRef

MULTI = '''\
from jax.experimental.pjit import (
    # the sharding helpers
    pjit,  # keep me
    FROM_GDA  # gda: goes with its name
)
x = pjit
'''


def test_dropping_the_last_name_takes_its_comment_and_keeps_the_others():
    out = fix_imports(MULTI, (), [ImportRef("jax.experimental.pjit", "FROM_GDA")])
    assert out == '''\
from jax.experimental.pjit import (
    # the sharding helpers
    pjit,  # keep me
)
x = pjit
'''


def test_dropping_a_name_with_a_comma_keeps_the_next_names_comment():
    source = "from m import (\n    a,  # on a\n    b,  # on b\n)\nx = b\n"
    assert fix_imports(source, (), [ImportRef("m", "a")]) == "from m import (\n    b,  # on b\n)\nx = b\n"


def test_alias_comments_finds_the_comment_on_each_names_line():
    assert alias_comments(MULTI.split("\nx =")[0], {("FROM_GDA", None), ("pjit", None)}) == {
        ("pjit", None): "# keep me", ("FROM_GDA", None): "# gda: goes with its name"}
    assert alias_comments("from m import a, b", {("a", None)}) == {}


def test_render_import_from():
    assert render_import_from("m", [("a", None), ("b", None)], True, "", "\n") == "from m import a, b"
    assert render_import_from("m", [("a as A", "# c")], True, "", "\n") == "from m import a as A  # c"
    assert render_import_from("m", [("a", "# c"), ("b", None)], True, "    ", "\n") == (
        "from m import (\n        a,  # c\n        b,\n    )")
    assert render_import_from("m", [("a", "# c")], False, "", "\n") == "from m import (\n    a,  # c\n)"


def test_a_re_rendered_import_keeps_the_files_line_endings():
    source = MULTI.replace("\n", "\r\n")
    out = fix_imports(source, (), [ImportRef("jax.experimental.pjit", "FROM_GDA")])
    assert out == "from jax.experimental.pjit import (\r\n    # the sharding helpers\r\n    pjit,  # keep me\r\n)\r\nx = pjit\r\n"


def test_a_dotted_name_below_a_submodule_imports_that_submodule():
    """`import jax` does not load `jax.extend.core`: a fix that writes `jax.extend.core.Primitive`
    (the local name `Primitive` being taken) imports `jax.extend.core` as well."""
    from tests.conftest import run

    src = "import jax\n\n\nclass Primitive:\n    pass\n\n\np = jax.core.Primitive('x')\n"
    out = run(src).text
    assert "import jax.extend.core\n" in out and "p = jax.extend.core.Primitive('x')" in out
    again = run(out).text  # with the submodule imported, nothing more is added
    assert again == out


# where an added import goes (analysis/import_layout.py) -------------------------------------------
def _add(source: str, *refs: ImportRef) -> str:
    return fix_imports(source, list(refs), ())


def test_a_from_import_joins_the_same_modules_statement_in_order():
    src = "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\nx = 1\n"
    assert _add(src, ImportRef("jax.sharding", "Mesh"), ImportRef("jax.sharding", "SingleDeviceSharding")) == (
        "import jax\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding\n\nx = 1\n")
    commented = src.replace("as P\n", "as P  # specs\n")  # the comment speaks of its line's names
    expected = commented.replace("\n\nx", "\nfrom jax.sharding import Mesh\n\nx")
    assert _add(commented, ImportRef("jax.sharding", "Mesh")) == expected


def test_a_from_import_joins_a_parenthesized_statement_on_a_line_of_its_own():
    src = "from jax.sharding import (\n    Mesh,  # m\n    PartitionSpec  # p\n)\nx = 1\n"
    assert _add(src, ImportRef("jax.sharding", "NamedSharding"), ImportRef("jax.sharding", "Zed")) == (
        "from jax.sharding import (\n    Mesh,  # m\n    NamedSharding,\n    PartitionSpec,  # p\n    Zed,\n)\nx = 1\n")
    wrapped = "from jax.sharding import (Mesh,\n                          PartitionSpec)\nx = 1\n"
    assert _add(wrapped, ImportRef("jax.sharding", "Zed")) == (
        "from jax.sharding import (Mesh,\n                          PartitionSpec, Zed)\nx = 1\n")


def test_a_from_import_does_not_join_a_star_import_or_one_outside_the_leading_block():
    src = "import jax\nfrom jax.sharding import *\n\nx = 1\ntry:\n    from jax.lax import psum\nexcept ImportError:\n    pass\n"
    # `Mesh` is one of the names the API history lists under jax.sharding: the star import binds it
    out = _add(src, ImportRef("jax.sharding", "Mesh"), ImportRef("jax.lax", "pmean"))
    assert out == ("import jax\nfrom jax.lax import pmean\nfrom jax.sharding import *\n\n"
                   "x = 1\ntry:\n    from jax.lax import psum\nexcept ImportError:\n    pass\n")
    out = _add(src, ImportRef("jax.sharding", "Zed"), ImportRef("jax.lax", "pmean"))  # a name it does not bind
    assert out == ("import jax\nfrom jax.lax import pmean\nfrom jax.sharding import *\nfrom jax.sharding import Zed\n\n"
                   "x = 1\ntry:\n    from jax.lax import psum\nexcept ImportError:\n    pass\n")


def test_import_jax_goes_next_to_the_other_jax_imports():
    src = "import os\nimport numpy as np\nimport jax.numpy as jnp\nfrom mypkg import util\n\nx = 1\n"
    assert _add(src, ImportRef("jax"), ImportRef("jax.experimental", "multihost_utils")) == (
        "import os\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
        "from jax.experimental import multihost_utils\nfrom mypkg import util\n\nx = 1\n")


def test_a_new_import_goes_with_the_third_party_group_in_order():
    src = '"""Doc."""\nimport os\n\n# arrays\nimport numpy as np\nfrom mypkg import util\n\nfrom . import local\n\nx = 1\n'
    assert _add(src, ImportRef("jax")) == (
        '"""Doc."""\nimport os\n\nimport jax\n# arrays\nimport numpy as np\nfrom mypkg import util\n\n'
        "from . import local\n\nx = 1\n")


def test_a_new_import_without_a_group_of_its_section_starts_one():
    src = "from __future__ import annotations\n\nimport os\n\nfrom . import local\n\nx = 1\n"
    assert _add(src, ImportRef("jax")) == (
        "from __future__ import annotations\n\nimport os\n\nimport jax\n\nfrom . import local\n\nx = 1\n")
    assert _add("from . import local\n\nx = 1\n", ImportRef("jax")) == "import jax\n\nfrom . import local\n\nx = 1\n"


def test_the_from_imports_fixes_write_join_the_same_modules_import():
    """The README's example: two `from jax.experimental...` imports each rewritten to
    `from jax.sharding import ...` become one statement; the file's own split imports stay."""
    from jaxmigrate.analysis.import_layout import join_written_imports

    original = ("import jax\nfrom jax.experimental import PartitionSpec as PS\nfrom jax.experimental.maps import Mesh\n"
                "from jax.lax import psum\nfrom jax.lax import pmean\n\nx = 1\n")
    fixed = ("import jax\nfrom jax.sharding import PartitionSpec as PS\nfrom jax.sharding import Mesh\n"
             "from jax.lax import psum\nfrom jax.lax import pmean\n\nx = 1\n")
    assert join_written_imports(original, fixed) == (
        "import jax\nfrom jax.sharding import Mesh, PartitionSpec as PS\n"
        "from jax.lax import psum\nfrom jax.lax import pmean\n\nx = 1\n")
    commented = fixed.replace("as PS\n", "as PS  # specs\n")
    assert join_written_imports(original, commented) == commented  # the comment is its line's


def test_joining_imports_holds_one_parse_and_leaves_the_joined_one_for_the_analysis():
    """The parse of the text before the joining goes before the joined text is parsed (a large
    module's two trees are not held at once), and that parse is the one the analysis reuses."""
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.import_layout import join_written_imports

    original = "from jax.experimental import PartitionSpec as PS\nfrom jax.experimental.maps import Mesh\n\nx = 1\n"
    fixed = "from jax.sharding import PartitionSpec as PS\nfrom jax.sharding import Mesh\n\nx = 1\n"
    FileContext.forget()
    try:
        FileContext.of(fixed)
        joined = join_written_imports(original, fixed)
        assert joined == "from jax.sharding import Mesh, PartitionSpec as PS\n\nx = 1\n"
        assert [ctx.source for ctx in FileContext._local.recent] == [joined]
    finally:
        FileContext.forget()


def test_forgetting_all_parses_but_one():
    from jaxmigrate.analysis.context import FileContext

    FileContext.forget()
    first, second = FileContext.of("a = 1\n"), FileContext.of("b = 2\n")
    FileContext.forget(keep="b = 2\n")
    assert FileContext.of("b = 2\n") is second and FileContext.of("a = 1\n") is not first
    FileContext.forget(keep="c = 3\n")
    assert FileContext.of("b = 2\n") is not second
    FileContext.forget()


def test_fixing_the_readme_example_writes_one_import_per_module_in_isort_order():
    from pathlib import Path

    from tests.conftest import run

    fixed = run((Path(__file__).resolve().parent.parent / "examples" / "legacy_train.py").read_text(), unsafe=True).text
    froms = [line for line in fixed.splitlines() if line.startswith("from ")]
    # its imports were in isort's order: they stay so, and an aliased name has a statement of its own, as isort writes it
    assert froms == ["from functools import partial", "from jax.lax import with_sharding_constraint",
                     "from jax.sharding import Mesh", "from jax.sharding import PartitionSpec as PS"]


def test_imports_added_to_a_module_without_any_stand_apart_from_its_code():
    assert _add("def f():\n    return 1\n", ImportRef("jax")) == "import jax\n\n\ndef f():\n    return 1\n"
    assert _add('"""Doc."""\nx = 1\n', ImportRef("jax")) == '"""Doc."""\nimport jax\n\nx = 1\n'
    assert _add('"""Doc."""\n\nx = 1\n', ImportRef("jax")) == '"""Doc."""\nimport jax\n\nx = 1\n'
    shebang = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n"
    assert _add(shebang, ImportRef("jax")) == "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport jax\n\nx = 1\n"


# the import service (analysis/imports.py): several names of one statement, __all__, dotted imports ------------
def test_two_names_of_one_statement_go_in_one_round_with_the_statements_comment():
    """JM502 once held such drops back a round (two re-renderings of one statement would clash):
    the service drops every unused name of a statement in one edit."""
    from jaxmigrate.engine.apply import apply_round
    from tests.conftest import run

    source = ("import jax\n"
              "from jax.experimental.global_device_array import GlobalDeviceArray, Shard  # legacy\n\n\n"
              "def f(x: GlobalDeviceArray) -> list:\n    s: Shard = x.local_shards[0]\n    return [s]\n")
    findings = run(source, fix=False).findings
    fixes = list({id(f.fix): f.fix for f in findings if f.fix is not None}.values())
    text, applied = apply_round(source, fixes)
    assert applied == len(fixes) == 2
    assert text == ("import jax\n\n\n"
                    "def f(x: jax.Array) -> list:\n    s: jax.Shard = x.addressable_shards[0]\n    return [s]\n")


def test_several_unused_names_of_one_statement_and_of_another_go_together():
    source = "from m import a, b, c\nfrom n import d, e\nx = b\n"
    refs = [ImportRef("m", "a"), ImportRef("m", "c"), ImportRef("n", "d"), ImportRef("n", "e")]
    assert fix_imports(source, (), refs) == "from m import b\nx = b\n"


def test_a_name_listed_in_dunder_all_is_kept():
    source = "from m import a, b\n__all__ = ['a']\n"
    assert fix_imports(source, (), [ImportRef("m", "a"), ImportRef("m", "b")]) == "from m import a\n__all__ = ['a']\n"


def test_a_dotted_import_is_dropped_by_its_root_name_only_when_the_root_is_unread():
    source = "import jax.experimental.maps\nimport numpy as np\ny = np.zeros(1)\n"
    assert fix_imports(source, (), [ImportRef("jax.experimental.maps")]) == "import numpy as np\ny = np.zeros(1)\n"
    read = "import jax.experimental.maps\nz = jax.numpy.zeros(1)\n"
    assert fix_imports(read, (), [ImportRef("jax.experimental.maps")]) == read


def test_an_import_already_there_in_another_form_is_not_added_again():
    as_from = "from jax import sharding\nx = sharding\n"
    assert fix_imports(as_from, [ImportRef("jax", "sharding")], ()) == as_from
    # `import jax` binds `jax` but does not load `jax.extend.core`: that one is added
    plain = "import jax\nx = jax.extend.core\n"
    assert fix_imports(plain, [ImportRef("jax.extend.core")], ()) == "import jax\nimport jax.extend.core\nx = jax.extend.core\n"
    # an `import jax.extend.core.x` already loads it
    below = "import jax.extend.core.primitives\nx = jax.extend.core\n"
    assert fix_imports(below, [ImportRef("jax.extend.core")], ()) == below


def test_the_importer_reuses_a_visible_name_and_drops_one_alias_keeping_jax():
    import ast

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("import jax, jax.experimental.maps\nfrom jax.sharding import PartitionSpec as P\nx = jax.devices()\n")
    assert importer(ctx).reference("jax.sharding.PartitionSpec") == ("P", ())
    assert importer(ctx).reference("jax.sharding.NamedSharding") == ("jax.sharding.NamedSharding", ())
    assert importer(ctx).module_reference("numpy", "np") == ("np", (ImportRef("numpy", None, "np"),))
    stmt = ctx.tree.body[0]
    assert isinstance(stmt, ast.Import)
    edit = importer(ctx).drop_alias(stmt, stmt.names[1])
    assert (edit.start, edit.text) == (0, "import jax")
    lone = FileContext.of("import jax.experimental.maps\ny = jax.devices()\n")
    stmt = lone.tree.body[0]
    assert isinstance(stmt, ast.Import)
    assert importer(lone).drop_alias(stmt, stmt.names[0]).text == "import jax"


def test_after_a_block_sharing_a_line_new_imports_go_on_lines_of_their_own():
    """The leading block has two statements on one line: the new imports follow that line, at
    column 0, without the text before the last statement (it was once copied in front of each)."""
    refs = [ImportRef("jax.sharding", "Mesh"), ImportRef("jax.numpy", None, "jnp")]
    assert fix_imports("import numpy as np; import os\nx = np\n", refs, ()) == (
        "import numpy as np; import os\nfrom jax.sharding import Mesh\nimport jax.numpy as jnp\nx = np\n")
    assert fix_imports("import os; import sys", [ImportRef("jax")], ()) == "import os; import sys\nimport jax\n"
    assert fix_imports("import os; import sys\r\nx = os\r\n", [ImportRef("jax")], ()) == (
        "import os; import sys\r\nimport jax\r\nx = os\r\n")


def test_an_import_already_bound_is_skipped_and_the_next_still_added():
    assert fix_imports("import jax\nx = jax\n", [ImportRef("jax"), ImportRef("jax.sharding", "Mesh")], ()) == (
        "import jax\nfrom jax.sharding import Mesh\nx = jax\n")
    assert fix_imports("import jax\nx = jax\n", [ImportRef("jax.numpy", None, "jnp")], ()) == (
        "import jax\nimport jax.numpy as jnp\nx = jax\n")


def test_a_module_without_imports_gets_them_after_its_docstring_or_magic_comments():
    assert fix_imports('"""Doc."""\nx = 1\n', [ImportRef("jax")], ()) == '"""Doc."""\nimport jax\n\nx = 1\n'
    magic = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n"
    assert fix_imports(magic, [ImportRef("jax")], ()) == (
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport jax\n\nx = 1\n")
    assert fix_imports("def f():\n    pass\n", [ImportRef("jax")], ()) == "import jax\n\n\ndef f():\n    pass\n"
    assert fix_imports("x = 1\n\ny = 2\n", [ImportRef("jax")], ()) == "import jax\n\nx = 1\n\ny = 2\n"


def test_a_new_name_joins_in_isorts_order_constants_classes_then_the_rest():
    assert fix_imports("from m import CONST, Klass, func\nx = 1\n", [ImportRef("m", "Alpha")], ()) == (
        "from m import CONST, Alpha, Klass, func\nx = 1\n")
    # one capital letter is a class, not a constant
    assert fix_imports("from m import CONST, A, func\nx = 1\n", [ImportRef("m", "B")], ()) == (
        "from m import CONST, A, B, func\nx = 1\n")
    assert fix_imports("from m import CONST, A, func\nx = 1\n", [ImportRef("m", "ZZ")], ()) == (
        "from m import CONST, ZZ, A, func\nx = 1\n")


def test_a_name_the_moves_table_will_rename_is_reused_for_its_new_name():
    """`from jax.experimental.maps import Mesh`: JM201 moves it to jax.sharding in the same run."""
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("from jax.experimental.maps import Mesh\nm = Mesh\n")
    assert importer(ctx).reference("jax.sharding.Mesh") == ("Mesh", ())


def test_a_from_import_of_a_submodule_already_loads_it():
    source = "import jax\nfrom jax.extend.core import Primitive\nx = jax.extend.core\n"
    assert fix_imports(source, [ImportRef("jax.extend.core")], ()) == source
    below = "import jax\nfrom jax.extend.core.primitives import dot_general_p\nx = jax.extend.core\n"
    assert fix_imports(below, [ImportRef("jax.extend.core")], ()) == below
    relative = "import jax\nfrom .jax.extend.core import Primitive\nx = jax.extend.core\n"
    assert "import jax.extend.core\n" in fix_imports(relative, [ImportRef("jax.extend.core")], ())


# A `jax.` reference is never written where `jax` means something else (issue 26, item 7) --------
def _reference_at(source: str, name: str, qualname: str, dotted: bool = True):
    """What the importer writes for ``qualname`` at the first load of ``name`` in ``source``."""
    import ast

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of(source)
    at = next(n for n in ctx.nodes(ast.Name) if n.id == name and isinstance(n.ctx, ast.Load))
    return importer(ctx).reference(qualname, at=at, dotted=dotted)


JAX_AS = (ImportRef("jax", None, "jax_"),)


@pytest.mark.parametrize("source", [
    "import numpy as jax\nx = jax.zeros(3)\ny = site\n",  # another module imported as `jax`
    "def f(jax):\n    return site\n",  # a parameter
    "def f():\n    jax = load()\n    return site\n",  # a local
    "import jax\njax = jax.numpy\ny = site\n",  # rebound at module level
    "import jax\nimport numpy as np\n\n\ndef f():\n    global jax\n    jax = np\n\n\ny = site\n",  # a global rebinding
    "class C:\n    jax = 'numpy'\n    y = site\n",  # a class attribute
])
def test_the_importer_imports_jax_under_a_free_name_where_jax_means_something_else(source):
    assert _reference_at(source, "site", "jax.jit") == ("jax_.jit", JAX_AS)
    assert _reference_at(source, "site", "jax.sharding.Mesh") == ("jax_.sharding.Mesh", JAX_AS)
    assert _reference_at(source, "site", "jax.sharding.Mesh", dotted=False) == ("Mesh", (ImportRef("jax.sharding", "Mesh"),))


def test_where_jax_is_free_or_jax_itself_the_reference_is_plain():
    assert _reference_at("def f(jax):\n    return jax\n\n\ny = site\n", "site", "jax.jit") == ("jax.jit", (ImportRef("jax"),))
    assert _reference_at("import jax\ny = site\n", "site", "jax.jit") == ("jax.jit", ())
    # `jax_` spelled anywhere, or bound, is not free either
    assert _reference_at("import numpy as jax\njax_ = 1\ny = site + jax_2\n", "site", "jax.jit") == (
        "jax_3.jit", (ImportRef("jax", None, "jax_3"),))


def test_a_submodule_below_jax_is_imported_under_a_free_name_too():
    """`import jax.extend.core` would bind `jax` (numpy here) as the jax package."""
    assert _reference_at("import numpy as jax\ny = site\n", "site", "jax.extend.core.Primitive") == (
        "jax_extend_core_.Primitive", (ImportRef("jax.extend.core", None, "jax_extend_core_"),))


def test_a_module_reference_does_not_go_through_a_root_bound_elsewhere():
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    taken = FileContext.of("import numpy as jax\njnp = None\n")
    assert importer(taken).module_reference("jax.numpy", "jnp") == ("jnp_", (ImportRef("jax.numpy", None, "jnp_"),))
    free = FileContext.of("jnp = None\n")
    assert importer(free).module_reference("jax.numpy", "jnp") == ("jax.numpy", (ImportRef("jax.numpy"),))


def test_a_statement_stands_in_its_functions_scope():
    """JM702 asks where a `with` statement stands: inside the function whose parameter is `jax`."""
    import ast

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("def f(jax, mesh):\n    with mesh:\n        pass\n\n\n@deco(jax)\ndef g(jax):\n    pass\n")
    with_stmt = ctx.nodes(ast.With)[0]
    assert importer(ctx).reference("jax.set_mesh", at=with_stmt, dotted=True) == ("jax_.set_mesh", JAX_AS)
    g = next(d for d in ctx.nodes(ast.FunctionDef) if d.name == "g")
    # a decorator stands in the enclosing scope, where `jax` is free
    assert importer(ctx).reference("jax.jit", at=g.decorator_list[0], dotted=True) == ("jax.jit", (ImportRef("jax"),))


def test_a_new_name_never_hides_a_builtin_or_a_name_the_file_reads():
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("x = 1\n")
    assert importer(ctx).reference("jax.tree.map") == ("jax.tree.map", (ImportRef("jax"),))  # not `from jax.tree import map`
    read = FileContext.of("x = Mesh\n")  # unbound here: a name the module gets some other way
    assert importer(read).reference("jax.sharding.Mesh") == ("jax.sharding.Mesh", (ImportRef("jax"),))


def test_a_global_statement_binds_in_the_module_scope():
    from jaxmigrate.analysis.context import FileContext

    source = "import jax\nimport numpy as np\n\n\ndef use_numpy():\n    global jax\n    jax = np\n\n\nx = jax.jit\n"
    resolver = FileContext.of(source).resolver
    assert [b.kind for b in resolver.module_scope.bindings["jax"]] == ["import", "alias"]
    assert resolver.resolve_name("jax", resolver.module_scope) is None  # JAX or numpy, depending on the call
    local = FileContext.of("import jax\n\n\ndef f():\n    jax = 1\n\n\nx = jax.jit\n").resolver  # a local is not global
    assert local.resolve_name("jax", local.module_scope) == "jax"


NUMPY_AS_JAX = '''\
import numpy as jax
from jax.experimental.pjit import pjit
from jax.experimental.maps import Mesh

x = jax.zeros(3)
g = pjit(abs, in_shardings=None)
with Mesh(devices, ("x",)):
    y = g(x)
'''

JAX_PARAMETER = '''\
from jax.experimental.pjit import pjit
from jax.experimental.maps import Mesh


def run(jax, devices, x):
    g = pjit(abs, in_shardings=None)
    with Mesh(devices, ("x",)):
        return g(x) + jax.numpy.zeros(3)
'''


@pytest.mark.parametrize("source", [NUMPY_AS_JAX, JAX_PARAMETER])
def test_an_unsafe_fix_never_writes_jax_where_jax_means_something_else(source):
    """Issue 26, item 7: `import jax` went above `import numpy as jax` (so `jax.jit` was numpy's),
    and a parameter `jax` was used as the module; both ended with "0 findings left"."""
    import ast

    from jaxmigrate.analysis.context import FileContext
    from tests.conftest import run

    fixed = run(source, unsafe=True)
    assert fixed.findings == []
    assert "import jax as jax_\n" in fixed.text and "jax_.jit(abs" in fixed.text and "jax_.set_mesh(Mesh(" in fixed.text
    ctx = FileContext.of(fixed.text)
    for node in ctx.nodes(ast.Name):  # every `jax` the text reads means what it did before
        if node.id == "jax" and isinstance(node.ctx, ast.Load):
            assert ctx.qualname(node) in (None, "numpy")
    code = [line for line in fixed.text.splitlines() if "jax." in line and not line.startswith(("from", "import"))]
    assert [line for line in code if "jax_." not in line] == [  # the lines that read numpy's or the parameter's
        line for line in source.splitlines() if "jax." in line and not line.startswith(("from", "import"))]


# A tree kept in isort's order stays so (issue 28): `fix` adds no ruff I001 ------------------------------------------
ISORTED = """\
import os

import jax
from jax.experimental import PartitionSpec as P
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit, with_sharding_constraint
from jax.interpreters import pxla

print(os, jax, P, Mesh, pjit, with_sharding_constraint, pxla)
"""


def test_rewritten_imports_take_their_place_in_isort_order():
    from tests.conftest import run

    assert run(ISORTED, ["JM201"]).text == ISORTED.replace("""\
from jax.experimental import PartitionSpec as P
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit, with_sharding_constraint
from jax.interpreters import pxla
""", """\
from jax.experimental.pjit import pjit
from jax.interpreters import pxla
from jax.lax import with_sharding_constraint
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P
""")
    combined = ISORTED.replace("import os\n", "import os\nfrom typing import Any, List as L\n")  # the module combines aliases
    assert "from jax.sharding import Mesh, PartitionSpec as P\n" in run(combined, ["JM201"]).text


def test_imports_out_of_isort_order_are_joined_where_they_were():
    from tests.conftest import run

    unsorted = ISORTED.replace("import os\n\n", "import os\n")  # `import os` and `import jax`: one group, not in order
    fixed = run(unsorted, ["JM201"]).text
    assert fixed.startswith("import os\nimport jax\nfrom jax.sharding import Mesh, PartitionSpec as P\n"
                            "from jax.lax import with_sharding_constraint\nfrom jax.experimental.pjit import pjit\n")


def test_a_from_import_the_joining_makes_too_long_is_wrapped():
    from tests.conftest import run

    source = ("import jax\nfrom jax.experimental import PartitionSpec\nfrom jax.experimental.maps import Mesh\n"
              "from jax.experimental.pjit import NamedSharding\nfrom jax.sharding import GSPMDSharding, SingleDeviceSharding\n"
              "\nprint(jax, PartitionSpec, Mesh, NamedSharding, GSPMDSharding, SingleDeviceSharding)\n")
    assert run(source, ["JM201"]).text.startswith(
        "import jax\nfrom jax.sharding import (\n    GSPMDSharding,\n    Mesh,\n    NamedSharding,\n    PartitionSpec,\n"
        "    SingleDeviceSharding,\n)\n\nprint(")


def _ruff_unsorted(folder: Path) -> set:
    """The files under ``folder`` whose imports ruff's isort (I001, its defaults) would reorder."""
    import json
    import subprocess
    import sys

    pytest.importorskip("ruff")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I", "--output-format", "json",
                          "--exit-zero", str(folder)], capture_output=True, text=True, check=True).stdout
    return {str(Path(r["filename"]).relative_to(folder)) for r in json.loads(out)}


def test_no_fixture_kept_in_isort_order_leaves_its_fix_out_of_it(tmp_path):
    """Every fixture whose before.py ruff finds in isort's order: its after.py is too."""
    root = Path(__file__).resolve().parent.parent / "fixtures"
    for before in root.glob("*/*/before.py"):
        case = tmp_path / before.parent.relative_to(root)
        case.mkdir(parents=True)
        (case / "before.py").write_bytes(before.read_bytes())
        (case / "after.py").write_bytes((before.parent / "after.py").read_bytes())
    unsorted = _ruff_unsorted(tmp_path)
    clean = {str(Path(name).parent) for name in {str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/*/before.py")}
             if name not in unsorted}
    assert len(clean) > 50
    assert sorted(case for case in clean if f"{case}/after.py" in unsorted) == []


def test_a_module_level_use_does_not_reuse_a_name_imported_further_down():
    """Module code runs in order (a notebook's cells too): `NamedSharding` imported in a later cell
    is not bound yet where an earlier cell's fix names it."""
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.imports import importer

    ctx = FileContext.of("import jax\nearly = 1\nfrom jax.sharding import NamedSharding\nlate = 2\n")
    early, late = (s.value for s in ctx.tree.body if isinstance(s, ast.Assign))
    assert importer(ctx).reference("jax.sharding.NamedSharding", at=early) == ("jax.sharding.NamedSharding", ())
    assert importer(ctx).reference("jax.sharding.NamedSharding", at=late) == ("NamedSharding", ())


def test_a_wrapped_import_takes_the_indent_of_the_modules_own_wrapped_imports():
    from tests.conftest import run

    source = ("import jax\nfrom jax.experimental import PartitionSpec\nfrom jax.experimental.maps import Mesh\n"
              "from jax.experimental.pjit import NamedSharding\nfrom jax.sharding import GSPMDSharding, SingleDeviceSharding\n"
              "from typing import (\n  Any,\n)\n"
              "\nprint(jax, Any, PartitionSpec, Mesh, NamedSharding, GSPMDSharding, SingleDeviceSharding)\n")
    assert "from jax.sharding import (\n  GSPMDSharding,\n  Mesh,\n" in run(source, ["JM201"]).text


def test_a_rewritten_import_joins_its_modules_import_in_a_later_block_of_the_module():
    """isort and ruff sort every import block of the module: a block after some code gets the
    same joining as the leading one (jax v0.4.1's lax_numpy_test.py: `from jax import config`
    beside `from jax import lax, tree_util`)."""
    from tests.conftest import run

    source = ("import os\n\nos.environ['X'] = '1'\n\nimport jax\nfrom jax.experimental.maps import Mesh\n"
              "from jax.sharding import NamedSharding\n\nprint(jax, Mesh, NamedSharding)\n")
    assert run(source, ["JM201"]).text == ("import os\n\nos.environ['X'] = '1'\n\nimport jax\n"
                                           "from jax.sharding import Mesh, NamedSharding\n\n"
                                           "print(jax, Mesh, NamedSharding)\n")
