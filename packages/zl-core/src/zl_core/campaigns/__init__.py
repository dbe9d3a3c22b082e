"""The campaign engine: a campaign is a plan of operator tasks that an executor runs.

- :mod:`.spec`: the one record of what a campaign runs (``CampaignSpec``), built by
  :mod:`zl_core.app` and passed down whole;
- :mod:`.settings`: the measurement settings every cell of a campaign shares;
- :mod:`.screen_task`, :mod:`.ab_task`: one operator's work as a frozen task record
  (no device) and a function that runs it on a lane and returns a frozen result;
- :mod:`.executor`: the ``Lane`` a task runs on and what runs the tasks (serial here;
  :mod:`.lanes` and :mod:`.dask_executor` over devices and hosts the same way);
- :mod:`.screen_campaign`, :mod:`.ab_campaign`: plan the tasks, hand them to an
  executor, write the campaign's tables;
- :mod:`.state`: running, interrupted, complete, and what ``--resume`` keeps.

The run folder's layout and records are :mod:`zl_core.store`'s. Nothing is imported
here, so that the report can use :mod:`.judging` without loading the engine.
"""
