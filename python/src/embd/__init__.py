from ._embd import *  # placeholder
