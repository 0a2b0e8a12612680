"""Topics a change touches beyond those its engine event names: rebuilt at the next flush.

A stage's teams fixed (``StageFilled``) show in the rosters of its tables, the travellers of
its deals and the standings; a released deal corrected (reopened, its actions re-entered)
shows to the public as it happens.
"""

from __future__ import annotations

from hub.domain.config import TournamentConfig
from hub.wire.topics import LIVE, PUBLIC, TopicKey, topic_name

__all__ = ["public_hand_keys", "stage_keys"]


def stage_keys(config: TournamentConfig, stage: str) -> set[TopicKey]:
    """What shows a stage's teams: rosters of its tables, travellers of its deals, standings."""
    plan = config.plan
    tables = [t for g in plan.stage_by_id[stage].groups for t in config.groups[g].tables]
    seats = range(1, config.seats + 1)
    keys: set[TopicKey] = set()
    for audience in (PUBLIC, LIVE):
        keys.add((audience, topic_name("standings")))
        keys.update((audience, topic_name("seat", s)) for s in seats)
        keys.update((audience, topic_name("table", t)) for t in tables)
    for deal_no in plan.deals_of_stage(stage):
        keys.update((LIVE, topic_name("compare", deal_no, s)) for s in seats)
    return keys


def public_hand_keys(config: TournamentConfig, deal_no: int) -> set[TopicKey]:
    """The public's deal and comparisons of a released deal."""
    seats = range(1, config.seats + 1)
    return {
        (PUBLIC, topic_name("deal", deal_no)),
        *((PUBLIC, topic_name("compare", deal_no, s)) for s in seats),
    }
