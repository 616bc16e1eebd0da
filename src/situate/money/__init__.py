"""Money: prices kept as data, what stages were billed for, what runs cost, and what they will.

One of the lowest layers (beside records and stores): it imports neither stages, the pipeline,
the report nor judging; the stages and the commands hand it plain records and their providers.

* ``pricing`` the price book (``conf/pricing/``) and what one call costs;
* ``billing`` what a stage was billed for (``Billed``, ``Unbilled``);
* ``costs`` a run's USD by stage, from what its stages were billed for;
* ``tokens`` counting tokens before anything is paid;
* ``shapes``, ``schedule_simulation``, ``estimate`` what contextualizing will cost
  (``situate estimate``);
* ``writing_cost`` what writing a run's replayed contexts cost;
* ``usd`` how dollars, rates and counts are written.
"""
