"""The key footer (perftui.ui.widgets.footer): recomposed when the keys it shows change, and
only then.  The oracle is the app's own bindings: what the footer shows is compared with
the keys the screen says are active and shown (Textual's ``active_bindings``), after each
change; a bindings signal with the same keys must not mount the keys again."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Label
from textual.widgets._footer import FooterKey
from uihelpers import sync

from perftui.ui.widgets.footer import Footer


class Keys(App[None]):
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("a", "one", "One"), Binding("b", "two", "Two"),
                Binding("c", "three", "Three", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.two_enabled = True

    def compose(self) -> ComposeResult:
        yield Label("body")
        yield Footer()

    def check_action(self, action: str, _parameters: tuple[object, ...]) -> bool | None:
        return None if action == "two" and not self.two_enabled else True  # None: dimmed

    def action_one(self) -> None:
        pass

    def action_two(self) -> None:
        pass

    def action_three(self) -> None:
        pass


def shown(app: Keys) -> list[tuple[str, str, bool]]:
    """(key, description, enabled) of every key the footer shows."""
    return [(k.key, k.description, not k.has_class("-disabled")) for k in app.query(FooterKey)]


def expected(app: Keys) -> list[tuple[str, str, bool]]:
    return [(b.key, b.description, enabled)
            for (_n, b, enabled, _t) in app.screen.active_bindings.values() if b.show]


async def composed(pilot: Pilot, app: Keys) -> None:
    """Until the footer shows the screen's keys (a recompose takes a few frames)."""
    for _ in range(100):
        await pilot.pause(0.01)
        if shown(app) == expected(app):
            return


@sync
async def test_footer_follows_changed_keys_and_skips_the_same() -> None:
    app = Keys()
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        footer = app.query_one(Footer)
        calls = []
        real = footer.recompose

        async def counted() -> None:
            calls.append(1)
            await real()

        footer.recompose = counted  # type: ignore[method-assign]
        assert shown(app) == [("a", "One", True), ("b", "Two", True)] == expected(app)

        for _ in range(5):  # the same keys: the footer's widgets stay
            app.refresh_bindings()
            await pilot.pause()
        assert calls == []
        assert shown(app) == expected(app)

        app.two_enabled = False  # a key's state changed: composed again, and shown
        app.refresh_bindings()
        await composed(pilot, app)
        assert calls == [1]
        assert shown(app) == [("a", "One", True), ("b", "Two", False)] == expected(app)

        app.two_enabled = True
        app.refresh_bindings()
        await composed(pilot, app)
        assert len(calls) == 2
        assert shown(app) == [("a", "One", True), ("b", "Two", True)] == expected(app)
