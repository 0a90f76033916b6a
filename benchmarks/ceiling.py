"""How far above the heuristic bot a bot could be: the strong bot's method with every hand seen.

    python benchmarks/ceiling.py --deals 60                   # Contract Whist: all-seeing, level 3
    python benchmarks/ceiling.py --game classic --deals 40
    python benchmarks/ceiling.py --levels 1,3 --deals 60 --seed c2

benchmarks/strength.py says how many points a deal the strong bot takes from the heuristic
bot; this says how many there are to take. It deals ``--deals`` deals from ``--seed`` into a
PBN file and has the referee play that file (``--deals-from``, duplicate, the default 5 s
deadline, every entry its own process, as strength.py plays) first by the all-seeing bot
(benchmarks/omniscient_bot.py: the strong bot whose one sampled deal is the true one, so it
bids and plays double-dummy on the real cards) against the heuristic bot, then by each
level asked against the heuristic bot on the very same deals. Each line gives the points a
deal with the standings' 95% interval and the load; the last says what share of the
all-seeing pair's edge each level takes. A goal for the strong bot is only worth setting
below the all-seeing pair's figure: that pair knows every card and still plays beside a
partner of its own kind against defenders who do not.

Needs the strong extra (``pip install -e ".[strong]"``). This is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from strength import add_tournament_arguments, check_levels_and_deals, entry_words, line, run_matchup

from oddtrick.rules import Seat, deal_cards
from oddtrick_referee.replay.pbn import pbn_card

OMNISCIENT = Path(__file__).resolve().with_name("omniscient_bot.py")


def write_deals(path: Path, seed: str, count: int) -> None:
    """``count`` deals drawn from ``seed`` as the referee deals them (the dealer rotating),
    written as a PBN deal set with their turned and cut cards."""
    games = []
    for number in range(1, count + 1):
        dealer = Seat((number - 1) % 4)
        deal, turned, cut = deal_cards(seed, number, dealer)
        games.append(
            f'[Board "{number}"]\n[Dealer "{dealer}"]\n[Deal "{deal}"]\n'
            f'[TurnedCard "{pbn_card(turned)}"]\n[CutCard "{pbn_card(cut)}"]\n'
        )
    path.write_text("\n".join(games), encoding="utf-8")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_tournament_arguments(parser, levels="3", deals=40, seed="ceiling")
    args = parser.parse_args()
    args.hogs = 0
    check_levels_and_deals(parser, args)
    return args


def main() -> None:
    args = parse_args()
    print(
        f"the all-seeing bot, then level {', '.join(map(str, args.level_list)) or 'none'}, against the "
        f"heuristic bot, {args.game}, {args.deals} deal pairs of seed {args.seed!r}: "
        f"{os.getloadavg()[0]:.1f} load now",
        flush=True,
    )
    found: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ceiling-") as folder:
        deals = Path(folder) / "deals.pbn"
        write_deals(deals, args.seed, args.deals)
        bot = Path(shutil.copy(OMNISCIENT, folder))
        matchups = [("all-seeing", [f"all-seeing={bot}:OmniscientBot"])]
        matchups += [entry_words(level) for level in args.level_list]
        for entry in matchups:
            result = run_matchup(entry, entry_words(None), ["--deals-from", str(deals)], args)
            print(line(result), flush=True)
            found.append(result)
            if args.out is not None:
                with args.out.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(result) + "\n")
    ceiling, (low, _) = found[0]["points_per_deal"], found[0]["ci95"] or (0.0, 0.0)
    for result in found[1:]:
        if low <= 0:
            print(f"{result['entry']}'s share: too few deal pairs (the all-seeing pair's interval reaches 0)")
        else:
            share = result["points_per_deal"] / ceiling
            print(f"{result['entry']} takes {share:.0%} of the all-seeing pair's {ceiling:+.2f} a deal")


if __name__ == "__main__":
    main()
