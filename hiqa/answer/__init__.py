"""Answers from ranked evidence: cited answers through an OpenAI-compatible LLM, or extractive."""
