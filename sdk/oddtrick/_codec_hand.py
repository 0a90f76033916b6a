"""Keep a seat's ``HandState`` up to date from the events that seat receives.

The referee and the SDK both need the public state of the hand as one seat
knows it: the referee to send it with every request, a bot to rebuild its
view. Re-encoding it from the rules engine at every decision costs more
than the rest of a decision together, so both sides advance a message event
by event: the SDK its seat's, the referee one public state for the table
(its cards are added per request from each seat's hand at the deal). A
hand's start comes from the seat's own engine view (``HandStarted``),
everything after it is public (calls, cards, tricks), so the state holds
nothing the seat may not see. Tests compare it with
:func:`oddtrick._codec.hand_state` at every decision of many matches.
"""

from __future__ import annotations

from oddtrick.v1 import referee_pb2


def start_hand(started: referee_pb2.HandStarted) -> referee_pb2.HandState:
    """The state at the deal: own cards, dealer, trumps when already known."""
    hand = referee_pb2.HandState(
        hand_number=started.hand_number,
        game_number=started.game_number,
        dealer=started.dealer,
        phase=referee_pb2.HAND_PHASE_PLAY if started.trumps else referee_pb2.HAND_PHASE_AUCTION,
        cards=started.cards,
        trumps=started.trumps,
        turned_card_face_up=started.HasField("turned_card"),
        score=started.score,
    )
    hand.tricks_won.SetInParent()  # no tricks yet, but known: present, as the engine's view says
    if started.HasField("turned_card"):
        hand.turned_card.CopyFrom(started.turned_card)
    if started.HasField("cut_card"):
        hand.cut_card.CopyFrom(started.cut_card)
    return hand


def advance_hand(hand: referee_pb2.HandState, event: referee_pb2.Event, seat: int) -> None:
    """Apply one in-hand event to ``hand``, the state of the seat ``seat`` (a wire value).

    ``hand_started`` is not handled here: it replaces the state (:func:`start_hand`).
    """
    kind = event.WhichOneof("kind")
    if kind == "card_played":
        played = event.card_played
        trick = hand.current_trick
        if not trick.cards:
            trick.number = len(hand.tricks) + 1
            trick.leader = played.seat
        trick.cards.add(seat=played.seat, card=played.card)
        if played.seat == hand.dealer:
            hand.turned_card_face_up = False
        if played.seat == seat:
            cards = hand.cards
            for index, card in enumerate(cards):
                if card == played.card:
                    del cards[index]
                    break
    elif kind == "trick_completed":
        completed = event.trick_completed
        hand.tricks.append(completed.trick)
        hand.ClearField("current_trick")
        hand.tricks_won.CopyFrom(completed.tricks)
    elif kind == "call_made":
        made = event.call_made
        hand.auction.add(seat=made.seat, call=made.call)
    elif kind == "auction_ended":
        ended = event.auction_ended
        if ended.HasField("contract"):
            hand.contract.CopyFrom(ended.contract)
            hand.trumps = ended.contract.denomination
            hand.phase = referee_pb2.HAND_PHASE_PLAY
        else:
            hand.phase = referee_pb2.HAND_PHASE_ENDED
    elif kind == "hand_ended":
        hand.phase = referee_pb2.HAND_PHASE_ENDED
        hand.score.CopyFrom(event.hand_ended.score)
