"""wirebench: does an LLM agent that reads akcli's docs land the netlist it was asked for?"""

__version__ = "0.1.0"
