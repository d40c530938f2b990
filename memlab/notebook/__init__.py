"""memlab in Jupyter: IPython magics (``%memlab``, ``%%remember``, ``%recall``), ipywidgets
explorers (:mod:`memlab.notebook.widgets`) and rich HTML display
(:mod:`memlab.notebook.display`)."""
