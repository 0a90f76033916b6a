#!/usr/bin/env python3
"""Build the SDK's API reference, HTML pages made by pdoc from the docstrings.

    python scripts/api_docs.py            # into build/api/ (open build/api/index.html)
    python scripts/api_docs.py OUTDIR     # anywhere else

It documents what bot authors import (:data:`MODULES`): ``oddtrick`` (its
``__all__``), ``oddtrick.rules``, the sample bots ``oddtrick.bots.*`` and the
public modules the README and docs/ point to. A private module (``_bot.py``,
``rules/_cards.py``) gets no page of its own: what it defines appears where a
public module re-exports it, and base classes and inherited members are named
and linked by that public name (``oddtrick.rules.SeatView``, not
``oddtrick.rules._view.SeatView``). The generated protocol code,
``oddtrick.v1``, is left out: a Python bot never touches it (the SDK speaks the
protocol), and bots in other languages read the documented ``.proto`` files in
proto/ that it is generated from.

Any warning pdoc gives (an annotation it cannot resolve, a name in ``__all__``
that is not there) fails the build: a reference that builds only with warnings
has a gap a reader falls into. Needs the ``docs`` extra (in ``dev``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pdoc.doc

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "api"
TEMPLATES = Path(__file__).resolve().parent / "api_docs_templates"

MODULES = (
    "oddtrick",
    "oddtrick.rules",
    "oddtrick.bots",  # with its submodules, the sample bots
    "oddtrick.anytime",
    "oddtrick.double_dummy",
    "oddtrick.duplicate",
    "oddtrick.deal_sets",
    "oddtrick.sprt",
    "oddtrick.analysis",
)
"""The public modules, each with its public submodules (pdoc's own walk: a
package with an ``__all__`` contributes only the submodules it names there)."""
EXCLUDED = (r"oddtrick\.v1(\.|$)",)
"""Never documented, even if a public package came to name them."""


def is_private(module: str) -> bool:
    """Whether some part of the dotted module name starts with an underscore."""
    return any(part.startswith("_") for part in module.split("."))


SPECS = (*MODULES, *(f"!{pattern}" for pattern in EXCLUDED))
"""What pdoc is given: the modules, then the patterns it leaves out."""


def public_modules() -> list[str]:
    """The names of every module the reference has a page for, in pdoc's order."""
    import pdoc.extract

    return pdoc.extract.walk_specs(SPECS)


def resolve_lazy_names(module: ModuleType) -> None:
    """Put the names a module's ``__getattr__`` loads on first use (``oddtrick.run``)
    into its namespace, so that pdoc, which looks a name in ``__all__`` up in the
    namespace and not through ``__getattr__``, documents them like the others."""
    for name in getattr(module, "__all__", ()):
        if name not in vars(module):
            setattr(module, name, getattr(module, name))


def reexports(modules: Iterable[ModuleType]) -> dict[tuple[str, str], tuple[str, str]]:
    """Where each public name defined in a private module is re-exported:
    ``(defining module, qualname)`` to ``(public module, name)``. Of the public
    modules that re-export it, the one nearest its definition wins
    (``oddtrick.rules.Card`` rather than ``oddtrick.Card``)."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for module in sorted(modules, key=lambda module: len(module.__name__)):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            defined_in = getattr(obj, "__module__", None)
            qualname = getattr(obj, "__qualname__", None)
            if isinstance(defined_in, str) and isinstance(qualname, str) and is_private(defined_in):
                if defined_in.startswith(f"{module.__name__}."):
                    found[(defined_in, qualname)] = (module.__name__, name)
                else:
                    found.setdefault((defined_in, qualname), (module.__name__, name))
    return found


class PublicNames:
    """The templates' filters that show a private module's names by their public re-export."""

    def __init__(self, found: dict[tuple[str, str], tuple[str, str]]) -> None:
        self.found = found
        by_length = sorted(found, key=lambda key: -len(f"{key[0]}.{key[1]}"))
        self.pattern = re.compile(
            "|".join(re.escape(f"{module}.{qualname}") + r"\b" for module, qualname in by_length) or "(?!)"
        )
        self.text_for = {
            f"{module}.{qualname}": f"{public[0]}.{public[1]}" for (module, qualname), public in found.items()
        }

    def location(self, spec: Sequence[str]) -> tuple[str, str]:
        """``(module, qualname)`` of a name, or of a member of a class, as a reader finds it."""
        module, qualname = spec[0], spec[1]
        head, dot, tail = qualname.partition(".")
        public = self.found.get((module, qualname)) or self.found.get((module, head))
        if public is None:
            return module, qualname
        if (module, qualname) in self.found:
            return public
        return public[0], f"{public[1]}{dot}{tail}"

    def text(self, text: str) -> str:
        """A type's text (``Mapping[oddtrick.rules._seats.Seat, …]``) with public names."""
        return self.pattern.sub(lambda match: self.text_for[match.group(0)], text)


def configure(modules: Sequence[str]) -> None:
    """Set pdoc's rendering up for the documented modules."""
    import pdoc.render

    import oddtrick

    names = PublicNames(reexports(importlib.import_module(name) for name in modules))
    pdoc.render.configure(
        docformat="restructuredtext",
        template_directory=TEMPLATES,
        footer_text=f"oddtrick {oddtrick.__version__}",
        math=False,
        mermaid=False,
        search=True,
        show_source=True,
    )
    pdoc.render.env.filters["public_location"] = names.location
    pdoc.render.env.filters["public_text"] = names.text


def defined_docstring(name: str, value: object) -> str:
    """The docstring written under ``name = ...`` in the private module that defines
    ``value`` (``PASS`` in ``rules/_calls.py``), or ``""``."""
    import pdoc.doc_ast

    for module_name, module in list(sys.modules.items()):
        defines = module_name.startswith("oddtrick.") and is_private(module_name) and module is not None
        if defines and vars(module).get(name, object()) is value:
            docstring = pdoc.doc_ast.walk_tree(module).var_docstrings.get(name, "")
            if docstring:
                return docstring
    return ""


LITERAL_BLOCK_MARKER = re.compile(r"(?<=\S)::$", re.MULTILINE)
"""The ``::`` that ends a paragraph before a literal block (``Try it::``)."""


def fill_docstrings(module: pdoc.doc.Module) -> None:
    """Give pdoc the docstrings it misses on its own, so that the pages show what
    ``help()`` and the source say:

    - a constant re-exported from a private module (``oddtrick.PASS``): pdoc reads a
      variable's docstring only in the module being documented, and an import has none;
    - a property whose getter is not a Python function (``GameState.phase`` is an
      ``attrgetter``, for speed): pdoc shows the getter's docstring, here attrgetter's own,
      rather than the property's ``doc``;
    - reST's ``text::`` before a literal block, which pdoc's reST reader leaves as it is:
      it reads ``text:``, as reST renders it.
    """
    import pdoc.doc

    for member in module.members.values():
        if isinstance(member, pdoc.doc.Variable) and not member.docstring:
            member.docstring = defined_docstring(member.name, getattr(module.obj, member.name, None))
    classes = [member for member in module.flattened_own_members if isinstance(member, pdoc.doc.Class)]
    for cls in classes:
        for member in cls.own_members:
            raw = inspect.getattr_static(cls.obj, member.name, None)
            if isinstance(raw, property) and not inspect.isfunction(raw.fget):
                own = raw.__doc__ if raw.__doc__ != type(raw.fget).__doc__ else None
                member.docstring = inspect.cleandoc(own or "")
    documented = [
        module,
        *module.members.values(),
        *(member for cls in classes for member in cls.own_members),
    ]
    for doc in documented:
        doc.docstring = LITERAL_BLOCK_MARKER.sub(":", doc.docstring)


def load() -> dict[str, pdoc.doc.Module]:
    """The documented modules as pdoc renders them, by name, their docstrings filled in."""
    import pdoc.doc

    import oddtrick

    resolve_lazy_names(oddtrick)
    modules = {name: pdoc.doc.Module.from_name(name) for name in public_modules()}
    for module in modules.values():
        fill_docstrings(module)
    return modules


def build(out: Path) -> list[str]:
    """Write the reference into ``out``; return the warnings pdoc gave (none, if it is whole)."""
    import pdoc.render

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        modules = load()
        configure(list(modules))
        for module in modules.values():
            page = out / f"{module.fullname.replace('.', '/')}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(pdoc.render.html_module(module, modules), encoding="utf-8")
        for name, text in (
            ("index.html", pdoc.render.html_index(modules)),
            ("search.js", pdoc.render.search_index(modules)),
        ):
            if text:
                (out / name).write_text(text, encoding="utf-8")
    return [f"{warning.category.__name__}: {warning.message}" for warning in caught]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build the oddtrick SDK's API reference (HTML, from the docstrings) with pdoc.",
        epilog="Open OUTDIR/index.html in a browser. Needs the docs extra: pip install -e '.[docs]'.",
    )
    parser.add_argument(
        "outdir",
        nargs="?",
        type=Path,
        default=DEFAULT_OUT,
        help=f"where to write the pages (default: {DEFAULT_OUT.relative_to(ROOT)}/)",
    )
    args = parser.parse_args(argv)
    try:
        import pdoc  # noqa: F401
    except ImportError:
        print(
            "pdoc is not installed: pip install -e '.[docs]' (or '.[dev]'), then build again", file=sys.stderr
        )
        return 2
    started = time.perf_counter()
    problems = build(args.outdir)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(
            f"the reference has {len(problems)} warning(s), above: fix the docstrings or annotations "
            "they name, then build again",
            file=sys.stderr,
        )
        return 1
    pages = sum(1 for _ in args.outdir.rglob("*.html"))
    elapsed = time.perf_counter() - started
    print(f"wrote {pages} pages to {args.outdir} in {elapsed:.1f} s; open {args.outdir / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
