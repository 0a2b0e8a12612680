"""Scoring kept up to date one hand result at a time, in a running and a like-for-like view.

Three formats (``ScoringFormat``, from the ``[scoring]`` section of the tournament file):

* ``ifp-points`` (the default): within a group, the players holding the same seat position (one
  per table) are ranked by total chip-score and earn N..1 points (N = tables in the group); tied
  players share the average of the points of the places they occupy. A team's points are the
  sum over seats; teams rank by points, then aggregate chip-score, then share the rank.
* ``imp``: on every deal, each seat's chip-score is compared with the average of the same seat
  on the same deal at the other tables of its group that counted it; the difference, in the
  format's unit (chips, big blinds), becomes IMPs by an IMP scale (``hub.domain.imp``). Players
  rank within their seat position by IMPs; a team's IMPs are the sum of its players'; teams rank
  by IMPs, then aggregate chip-score, then share the rank.
* ``chips``: players rank within their seat position by chip-score, teams by aggregate
  chip-score (equal: shared rank).

Two views are kept at all times because tables play the deals in different orders:

* ``running``: every hand counted so far;
* ``like_for_like``: only the deals counted at every table of the group (the fair comparison).

A change costs O(seats x tables of one group), never O(tournament): totals are kept per
(view, table, seat), and a ranking is recomputed only when one of its totals changed. (Under
``imp`` a result moves the IMPs of every table of its deal, so the deal's IMPs are recomputed:
still one group's tables.)

Points are exact: ``fractions.Fraction`` in the dataclasses (a tie of an even number of players
shares a half point); ``as_dict()`` turns them into JSON numbers, an ``int`` when whole, else a
float rounded to 4 decimals.

The package, one module per concept: ``format`` (``ScoringFormat``, the views), ``layout``
(``ScoringLayout``), ``imps`` (a deal's IMPs), ``rows`` (standings rows), ``ranking`` (ties and
tie-breaks), ``board`` (``Scoreboard``, ``full_recompute``). Its users import from here.
"""

from __future__ import annotations

from hub.domain.scoring.board import Scoreboard, full_recompute
from hub.domain.scoring.format import (
    DEFAULT_SCORING,
    FORMATS,
    VIEWS,
    Format,
    JsonNumber,
    ScoringFormat,
    View,
    json_number,
)
from hub.domain.scoring.imps import deal_imps, team_deal_imps
from hub.domain.scoring.layout import ScoringLayout
from hub.domain.scoring.ranking import ifp_ranking, plain_ranking, rank_teams
from hub.domain.scoring.rows import SeatRow, SeatStanding, TeamStanding, penalty_dict

__all__ = [
    "DEFAULT_SCORING",
    "FORMATS",
    "VIEWS",
    "Format",
    "JsonNumber",
    "Scoreboard",
    "ScoringFormat",
    "ScoringLayout",
    "SeatRow",
    "SeatStanding",
    "TeamStanding",
    "View",
    "deal_imps",
    "full_recompute",
    "ifp_ranking",
    "json_number",
    "penalty_dict",
    "plain_ranking",
    "rank_teams",
    "team_deal_imps",
]
