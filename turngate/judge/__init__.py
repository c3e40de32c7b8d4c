"""The judge, one stage per module: catalog → targets and connectors → runner → observations →
decision record → verdict → reports; beside them the executable spec model and its exploration."""
