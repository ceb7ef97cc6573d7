"""The OpenHands SDK room (``openhands-sdk``).

Today it holds the analyzer's model of the SDK (``model.py``): its ``View``,
which puts every earlier condensation's summary back among the events the next
condensation folds. The runtime half (stamping ``Condensation`` events, checking
resumed conversations) belongs here too, with its own extra.
"""
