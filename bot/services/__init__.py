"""The features adapters and the scheduler call: each takes its dependencies in its constructor.

Services sit between the adapters (above) and storage and the pure core (below); they import
neither discord nor slack.
"""
