"""Actions from text, as people and logs write them."""

from __future__ import annotations

from oddtrick.rules import Action, Call, Card, GameState, Phase


def parse_action(text: str, state: GameState) -> Action:
    """Text read in the light of the phase: ``7C`` is a bid in the auction and the
    seven of clubs in play (``QH``/``10H`` cards; ``13NT``, ``pass``, ``double`` calls)."""
    if state.phase is Phase.AUCTION:
        return Call.parse(text)
    return Card.parse(text)
