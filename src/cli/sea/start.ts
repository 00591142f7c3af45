// The single executable's entry: the engine is pointed at the executable's assets before the CLI runs.
import './install.js';
import '../main.js';
