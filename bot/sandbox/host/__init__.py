"""The sandbox's host side: the manager process and what it drives.

``python -m bot.sandbox.host.manager`` runs with an empty environment and no secrets: it
probes the host, computes the jail's filesystem layout, sets up cgroups, keeps the pool of
jails and the torch-warm fork server (``zygote.py``), and speaks one run's protocol to each
(``onerun.py``), validating what comes back at the boundary (``images.py``, the typed graph
in ``bot.sandbox.graph``) before it crosses to the bot.
"""
