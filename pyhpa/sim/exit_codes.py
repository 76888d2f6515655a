"""Exit codes of the simulator's commands (``pyhpa simulate``, ``pyhpa tune``), one convention:

* 0 -- done;
* 1 -- a runtime failure: the outputs could not be written, a Dask scheduler could not be reached
  or its workers failed; the input was fine;
* 2 -- a usage or input error: a bad flag, a scenario file (or ``--compare`` file, ``tune:``
  section) that cannot be used, an ``-o`` where no directory can be made; also ``simulate
  --strict`` when an HPA of the scenario never computed a scale;
* 3 -- ``tune`` only: done, but no candidate is within the budget (the outputs recommend the
  least under-provisioned one);
* 130 -- interrupted (Ctrl-C).

Every error is one line on stderr naming the flag, file and line, or server it concerns.
"""

OK = 0
RUNTIME_FAILURE = 1
USAGE = 2
NO_CANDIDATE_WITHIN_BUDGET = 3
INTERRUPTED = 130
