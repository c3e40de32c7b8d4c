"""Exploration: runs no scenario wrote down, generated, predicted by the spec model, judged on a target.

``plans`` draws runs (hypothesis strategies) and writes each as a scenario of model predictions;
``explorer`` runs them on a target, shrinks a failing run to its smallest and saves it as a catalog
scenario; ``explore_cli`` is ``turngate explore``; ``sensitivity`` measures what exploration adds.
"""
