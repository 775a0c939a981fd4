"""Progress bars (rich) for chunking, embedding, answering and scoring; silent when disabled."""

from __future__ import annotations

from contextlib import contextmanager


class NullBar:
    """A bar that shows nothing (disabled progress, Ray tasks)."""

    def advance(self, n: int) -> None:
        return None


class Progress:
    """Thin wrapper over ``rich.progress.Progress`` so the pipeline code never checks ``enabled``."""

    def __init__(self, enabled: bool = True, console=None) -> None:
        self.enabled = enabled
        self._p = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            # In Jupyter, output written during the live display (a library's own progress bar on stderr) must
            # not be redirected into it: ipykernel flushes its streams into the display, which flushes them
            # again, without end (RecursionError; Textualize/rich#3390). It goes to the cell as it is.
            jupyter = (console or Console()).is_jupyter
            self._p = RichProgress(
                TextColumn("[bold]{task.description:<40}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=False,
                redirect_stdout=not jupyter,
                redirect_stderr=not jupyter,
            )

    def __enter__(self) -> "Progress":
        if self._p is not None:
            self._p.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)

    def add(self, description: str, total: int):
        if self._p is None:
            return NullBar()
        task = self._p.add_task(description[:40], total=total)
        return _Bar(self._p, task)

    def advance(self, bar, n: int) -> None:
        bar.advance(n)

    @contextmanager
    def scope(self):
        """Bars added inside are removed when it ends (a search's trials would otherwise pile theirs up)."""
        before = {t.id for t in self._p.tasks} if self._p is not None else set()
        try:
            yield
        finally:
            if self._p is not None:
                for t in list(self._p.tasks):
                    if t.id not in before:
                        self._p.remove_task(t.id)

    def complete(self, bar) -> None:
        if isinstance(bar, _Bar):
            bar.complete()


class _Bar:
    def __init__(self, progress, task) -> None:
        self._p, self._task = progress, task

    def advance(self, n: int) -> None:
        self._p.advance(self._task, n)

    def complete(self) -> None:
        task = next((t for t in self._p.tasks if t.id == self._task), None)
        if task is not None and task.total is not None:
            self._p.update(self._task, completed=task.total)
