"""Document keywords: what tells a document apart in its collection (rules, lexicon, LLM)."""
