"""The smolagents room: the analyzer's model of smolagents (``model.py``)."""
