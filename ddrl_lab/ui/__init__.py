"""The notebook's views: of a job, the live `Dashboard`, its sliders and the plan page; of a study, the
`StudyView` (`study_view`).

Not exported: this file is written by hand, like `ddrl_lab/__init__.py`."""
