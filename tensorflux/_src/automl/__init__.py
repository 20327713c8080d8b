"""AutoML on tables: a CSV in, a trained, ensembled, servable model out.

Layers, bottom up (each file imports only those above it in this list):
    errors        DataError, the one-line message for bad user data
    tables        reading CSV / TSV / Parquet (ragged rows named by line)
    column_types  what each column is (numeric, categorical, boolean, text, datetime, ...)
    task          binary / multiclass / regression, and the label encoding
    metrics       accuracy ... r2 in NumPy, and which way is better
    preprocess    the fitted feature encoder (imputation, rare categories, skew)
    splits        stratified hold-out and k-fold splits
    gbm, networks the model families (LightGBM; tensorflux Session programs)
    ensemble      Caruana's greedy ensemble selection
    leaderboard   the live table printed as models finish
    search        the time-budgeted search over the families
    report_plots  the report's PNGs (matplotlib Agg, atomic writes)
    report        write_report: report.json, the PNGs and report.html
    predictor     Predictor (predict, evaluate, save/load) and fit()
"""
