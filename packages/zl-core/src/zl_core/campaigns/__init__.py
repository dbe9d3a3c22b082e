"""The campaign engine: a campaign is a plan of operator tasks that an executor runs.

- :mod:`.layout`: where every file of a campaign lives (the one place that spells
  ``<op>/rNN/<side>``);
- :mod:`.record`: ``campaign.json`` (what was asked, which kind);
- :mod:`.settings`: the measurement settings every cell of a campaign shares;
- :mod:`.screen_task`, :mod:`.ab_task`: one operator's work as a frozen task record
  and a function that runs it and returns a frozen result;
- :mod:`.executor`: what runs the tasks (serial here; lanes and hosts plug in the same way);
- :mod:`.screen_campaign`, :mod:`.ab_campaign`: plan the tasks, hand them to an
  executor, write the campaign's tables.

Nothing is imported here, so that the report can read a layout without loading the engine.
"""
