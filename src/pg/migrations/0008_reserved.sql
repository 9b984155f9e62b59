-- This number is kept for the tables of the triggers (webhook deliveries, polling); nothing is changed here.
SELECT 1;
