"""The OpenAI Agents SDK room (``pip install openai-agents``).

Today it holds the analyzer's model of the SDK (``model.py``): its tool
decorator. The runtime half (stamping ``OpenAIResponsesCompactionSession``,
checking restored ``RunState`` resumes, guarding ``FunctionTool``) belongs here
too, with its own extra.
"""
