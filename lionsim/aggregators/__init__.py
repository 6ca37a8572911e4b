"""How workers' sign votes become one update: majority vote or mean, and the tie rules."""

from lionsim.aggregators.ties import TIE_RULES, TieBreak, check_tie
from lionsim.aggregators.votes import VOTE_RULES, MajorityVote, MeanVote, VoteRule

__all__ = ["TIE_RULES", "VOTE_RULES", "MajorityVote", "MeanVote", "TieBreak", "VoteRule", "check_tie"]
