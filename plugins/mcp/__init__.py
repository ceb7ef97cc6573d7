"""The MCP room: the analyzer's model of the Model Context Protocol's clients (``model.py``)."""
