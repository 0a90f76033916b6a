"""The SDK's API reference builds clean, has a page per public module, and documents every public name.

The reference (``python scripts/api_docs.py``) is how bot authors find
``Seat.partner``, ``Trick.winner`` or ``view.unseen_cards()`` without reading
the source. It is built here as the command builds it, with every warning an
error; and the public API it renders (the same modules, through pdoc's own
model of them) is walked for names without a docstring: every module, class,
function, method and property, and every module-level constant. Dataclass
fields, enum members and other class attributes are described by their class's
docstring and are not required to have their own.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pdoc.doc

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "api_docs.py"

PUBLIC_MODULES = (
    "oddtrick",
    "oddtrick.rules",
    "oddtrick.bots",
    "oddtrick.bots.auction_simulation",
    "oddtrick.bots.heuristic_bot",
    "oddtrick.bots.pimc_bot",
    "oddtrick.bots.random_bot",
    "oddtrick.anytime",
    "oddtrick.double_dummy",
    "oddtrick.duplicate",
    "oddtrick.deal_sets",
    "oddtrick.sprt",
    "oddtrick.analysis",
)
"""What README.md and docs/ tell bot authors to import, and the sample bots."""


@functools.cache
def api_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_docs", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(out: Path, module: str) -> Path:
    return out / f"{module.replace('.', '/')}.html"


def test_the_reference_builds_without_a_warning_with_a_page_per_public_module(tmp_path):
    out = tmp_path / "api"
    result = subprocess.run(
        [sys.executable, "-W", "error", str(SCRIPT), str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, f"the reference did not build clean:\n{result.stderr}"
    assert result.stderr == "", f"the build wrote warnings or errors:\n{result.stderr}"
    missing = [module for module in PUBLIC_MODULES if not page(out, module).is_file()]
    assert not missing, f"no page for {missing}"
    pages = sorted(str(path.relative_to(out)) for path in out.rglob("*.html"))
    internal = [name for name in pages if "/_" in f"/{name}" or name.startswith("oddtrick/v1")]
    assert not internal, f"pages for private or generated modules: {internal}"
    assert len(pages) == len(PUBLIC_MODULES) + 1, f"unexpected pages: {pages}"  # + index.html

    front = page(out, "oddtrick").read_text(encoding="utf-8")
    unlinked = [
        module for module in api_docs().MODULES[1:] if f'href="{module.replace(".", "/")}.html' not in front
    ]
    assert not unlinked, f"the front page does not link {unlinked}"
    # BotView inherits SeatView's helpers from a private module: they are listed and
    # linked on its page by their public name, and no private module's name shows.
    assert 'href="oddtrick/rules.html#SeatView.unseen_cards"' in front
    assert "oddtrick.rules._view" not in front.replace('href="', "")


@functools.cache
def rendered_modules() -> dict[str, pdoc.doc.Module]:
    return api_docs().load()  # type: ignore[no-any-return]


def test_the_reference_documents_the_public_modules():
    assert sorted(rendered_modules()) == sorted(PUBLIC_MODULES)


def is_property(cls: pdoc.doc.Class, name: str) -> bool:
    raw = inspect.getattr_static(cls.obj, name, None)
    return isinstance(raw, (property, functools.cached_property))


def own_class_docstring(cls: pdoc.doc.Class) -> str:
    """The class's own docstring as the page shows it: not one inherited from a base
    class (which describes the base), nor the signature dataclasses write in its place."""
    return cls.docstring if vars(cls.obj).get("__doc__") else ""


def documented(doc: pdoc.doc.Doc) -> str:
    if isinstance(doc, pdoc.doc.Class):
        return own_class_docstring(doc)
    return doc.docstring


def public_names(module: pdoc.doc.Module) -> Iterator[tuple[str, pdoc.doc.Doc]]:
    """Every name the module's page documents that must say what it is for."""
    yield module.fullname, module
    for member in module.members.values():
        if member.name.startswith("_"):
            continue  # private, or a convention such as __version__ that needs no words
        yield member.fullname, member
        if isinstance(member, pdoc.doc.Class):
            yield from class_names(member)


def class_names(cls: pdoc.doc.Class) -> Iterator[tuple[str, pdoc.doc.Doc]]:
    for member in cls.own_members:
        if member.name.startswith("_"):
            continue
        if isinstance(member, pdoc.doc.Class):
            yield member.fullname, member
            yield from class_names(member)
        elif isinstance(member, pdoc.doc.Function) or is_property(cls, member.name):
            yield member.fullname, member


def test_every_public_name_has_a_docstring():
    names = [name for module in rendered_modules().values() for name in public_names(module)]
    assert len(names) > 300, "the walk found too few names to be walking the public API"
    missing = [name for name, doc in names if not documented(doc).strip()]
    assert not missing, (
        f"{len(missing)} public names have no docstring; say what each is for:\n  " + "\n  ".join(missing)
    )
