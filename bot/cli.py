"""The ``studybot`` command line (typer).

Commands parse their arguments and hand over to the wiring object that :mod:`bot.__main__`
puts in ``ctx.obj``; nothing here builds storage, services or adapters itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.questions.loader import load_packs

__all__ = ["app"]

app = typer.Typer(
    name="studybot",
    help="An async study bot for Discord and Slack. Run `studybot console` to try it locally.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
questions_app = typer.Typer(help="Question packs: lint and list.", no_args_is_help=True)
app.add_typer(questions_app, name="questions")


def _packs_dir(ctx: typer.Context, path: Path | None) -> Path:
    if path is not None:
        return path
    return Path(ctx.obj.settings().packs_dir)


@questions_app.command("lint")
def questions_lint(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="A pack file or folder.")] = None,
) -> None:
    """Check packs against the schema; print every problem as file:line: field: reason."""
    result = load_packs(_packs_dir(ctx, path))
    for problem in result.problems:
        typer.echo(str(problem), err=problem.severity == "error")
    items = sum(len(p.pack.items) for p in result.packs)
    if result.errors:
        typer.echo(f"{len(result.errors)} problem(s); {len(result.packs)} pack(s) clean", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok: {len(result.packs)} pack(s), {items} item(s)")


@questions_app.command("list")
def questions_list(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="A pack file or folder.")] = None,
) -> None:
    """List packs and their items (id, kind, difficulty, tags)."""
    result = load_packs(_packs_dir(ctx, path))
    for problem in result.errors:
        typer.echo(str(problem), err=True)
    for loaded in result.packs:
        pack = loaded.pack
        typer.echo(f"{pack.pack}: {pack.title} ({len(pack.items)} items) [{loaded.path}]")
        for item in pack.items:
            tags = ",".join(item.tags)
            typer.echo(f"  {item.id:<28} {item.kind:<16} {item.difficulty:<7} {tags}")
    if result.errors:
        raise typer.Exit(1)
