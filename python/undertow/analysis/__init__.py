"""Analysis of traffic series: the wavelet energy (logscale) diagram and Hurst estimates.

Pure Python (numpy, PyWavelets; pyarrow for run directories); nothing here
needs the simulator core. Import from the submodules:

* ``undertow.analysis.series``: ``bin_events``, ``read_timeseries``,
  ``read_run_series``.
* ``undertow.analysis.energy``: ``energy``, ``hurst``, ``energy_table``,
  ``fgn``, ``EnergyResult``, ``HurstEstimate``.

(The package does not re-export them: a function ``energy`` here would hide
the submodule ``undertow.analysis.energy``.) See ``docs/energy.md``.
"""
