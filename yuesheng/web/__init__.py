"""The browser views of a rite. The only place HTML and JS live."""
