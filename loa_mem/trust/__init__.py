"""The agent trust memory: dissents, overrides, scores and the devil's advocate."""
