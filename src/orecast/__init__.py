"""orecast: an iron-ore price forecasting expert agent with durable conversations."""

__version__ = "0.1.0"
