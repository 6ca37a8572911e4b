"""How workers' sign votes become one update: majority vote or mean."""

from lionsim.aggregators.votes import VOTE_RULES, MajorityVote, MeanVote, VoteRule

__all__ = ["VOTE_RULES", "MajorityVote", "MeanVote", "VoteRule"]
