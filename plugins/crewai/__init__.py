"""The CrewAI room: the analyzer's model of CrewAI (``model.py``)."""
