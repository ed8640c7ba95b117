"""Benchmark of orecast's checkpoint savers against the official LangGraph savers (`make bench`)."""
