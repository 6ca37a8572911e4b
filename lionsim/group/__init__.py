"""A real process group's shared pieces, used by the bench's ranks (lionsim.launch) and by the
measured collectives' (lionsim.measure): who started this process and where its peers meet
(env.py), joining the group and checking that every rank runs the same thing (join.py), where
the ranks run (hosts.py), and the library's native stderr held back while joining (quiet.py).

It sits below both users, so neither imports the other to reach it.
"""
